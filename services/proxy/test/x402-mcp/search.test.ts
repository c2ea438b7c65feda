// @stores once: the prices are read back from the answers; the catalog the search reads is the store's.
import { type McpV2Server, startMcpV2Server, type TestApp, TOOL_CORPUS } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caller, startGateway } from "../helpers.ts";
import { connectV2, memberAgent, virtualAgent } from "../virtual/fixture.ts";
import { connect, PAY_TO, SEPOLIA_USDC } from "./support.ts";

// A search-mode virtual server's search_tools shows the same x402 prices as tools/list does
// (docs/payments.md, MCP tool calls), by exposed name, first match wins; with the official clients.

let gw: TestApp;
let member: McpV2Server;
let v: string;
let call: Awaited<ReturnType<typeof caller>>;

type Found = { name: string; _meta?: Record<string, unknown> };
type Searched = { content: Array<{ type: string; text: string }>; structuredContent?: { tools: Found[] } };

const price = (amount: string) => ({ amount, asset: SEPOLIA_USDC, network: "eip155:84532" });

beforeAll(async () => {
  gw = await startGateway();
  call = await caller(gw);
  member = await startMcpV2Server({ name: "dev", tools: [], prompts: [], definitions: TOOL_CORPUS.dev });
  const dev = await memberAgent(call, member.url);
  v = await virtualAgent(call, [{ agent_id: dev, prefix: "dev" }], {
    tool_discovery: "search",
    rate_limit: { rps: 100_000, burst: 100_000 },
    tool_prices: [
      // First match wins: the exact name before the prefix that also matches it.
      { tool: "dev__create_issue", amount: "2500", network: "base-sepolia", pay_to: PAY_TO },
      { tool: "dev__merge_*", amount: "9", network: "base-sepolia", pay_to: PAY_TO },
      { tool: "dev__create_*", amount: "1000", network: "base-sepolia", pay_to: PAY_TO },
    ],
  });
});
afterAll(async () => {
  await member?.close();
  await gw?.close();
});

async function search(query: string, limit = 20): Promise<Searched> {
  const client = await connectV2(gw, call, v);
  try {
    return (await client.callTool({ name: "search_tools", arguments: { query, limit } })) as Searched;
  } finally {
    await client.close();
  }
}

describe("search_tools on a search-mode virtual server with tool prices", () => {
  it("carries each priced tool's x402/price, as tools/list would, and leaves unpriced tools untouched", async () => {
    const r = await search("create an issue, a release or a branch");
    const found = r.structuredContent?.tools ?? [];
    const byName = new Map(found.map((t) => [t.name, t]));
    expect(byName.get("dev__create_issue")?._meta).toEqual({ "x402/price": price("2500") });
    const creates = found.filter((t) => t.name.startsWith("dev__create_") && t.name !== "dev__create_issue");
    expect(creates.length).toBeGreaterThan(0);
    for (const t of creates) expect(t._meta, t.name).toEqual({ "x402/price": price("1000") });
    const free = found.filter((t) => !t.name.startsWith("dev__create_") && !t.name.startsWith("dev__merge_"));
    expect(free.length).toBeGreaterThan(0);
    for (const t of free) expect(t._meta?.["x402/price"], t.name).toBeUndefined();
    // The text content is the same JSON, for clients that read only the text.
    expect(JSON.parse(r.content[0]?.text ?? "null")).toEqual(r.structuredContent);
  });

  it("a prefix rule prices every tool it names", async () => {
    const r = await search("merge my approved pull request into main");
    const pr = (r.structuredContent?.tools ?? []).filter((t) => t.name.startsWith("dev__merge_"));
    expect(pr.length).toBeGreaterThan(0);
    for (const t of pr) expect(t._meta, t.name).toEqual({ "x402/price": price("9") });
  });

  it("the SDK 1.x client sees the same prices", async () => {
    const client = await connect(gw, call, v);
    try {
      const r = (await client.callTool({
        name: "search_tools",
        arguments: { query: "create an issue, a release or a branch", limit: 20 },
      })) as Searched;
      const found = r.structuredContent?.tools ?? JSON.parse(r.content[0]?.text ?? "{}").tools ?? [];
      const issue = (found as Found[]).find((t) => t.name === "dev__create_issue");
      expect(issue, JSON.stringify(found.map((t: Found) => t.name))).toBeDefined();
      expect(issue?._meta).toEqual({ "x402/price": price("2500") });
    } finally {
      await client.close();
    }
  });

  it("a virtual server without tool prices answers search_tools without any x402 _meta", async () => {
    const dev = await memberAgent(call, member.url);
    const plain = await virtualAgent(call, [{ agent_id: dev, prefix: "dev" }], {
      tool_discovery: "search",
      rate_limit: { rps: 100_000, burst: 100_000 },
    });
    const client = await connectV2(gw, call, plain);
    try {
      const r = (await client.callTool({
        name: "search_tools",
        arguments: { query: "create an issue", limit: 10 },
      })) as Searched;
      const found = r.structuredContent?.tools ?? [];
      expect(found.length).toBeGreaterThan(0);
      for (const t of found) expect(t._meta?.["x402/price"]).toBeUndefined();
    } finally {
      await client.close();
    }
  });
});
