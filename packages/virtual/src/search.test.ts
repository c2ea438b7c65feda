import { describe, expect, it } from "vitest";
import type { Member } from "./members.ts";
import { planRequest } from "./plan.ts";
import { REVISION } from "./protocol.ts";
import { searchArgs, unwrapCallTool } from "./search.ts";

const target = {
  origin: "http://127.0.0.1:1",
  host: "127.0.0.1",
  path: "/mcp",
} as unknown as Member["target"];
const gh: Member = {
  agentId: "agt_gh",
  prefix: "gh",
  include: null,
  exclude: null,
  target,
  credentialRef: null,
};
const server = { name: "portal", version: "1", members: [gh], discovery: "search" as const };
const meta = { "io.modelcontextprotocol/protocolVersion": REVISION };
const call = (name: string, args: unknown) =>
  Buffer.from(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name, arguments: args, _meta: meta },
    }),
  );
const plan = (b: Buffer) => planRequest(server, b, { protocolVersion: REVISION });
const invalid = (b: Buffer) => {
  const p = plan(b);
  expect(p.kind).toBe("own");
  if (p.kind !== "own") return "";
  expect(p.answer.status).toBe(200);
  const error = p.answer.message.error as { code: number; message: string };
  expect(p.answer.message.id).toBe(7);
  expect(error.code).toBe(-32602);
  return error.message;
};

describe("search mode: plans", () => {
  it("answers tools/list and search_tools itself, routes other tools as before", () => {
    const list = Buffer.from(
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } }),
    );
    expect(plan(list)).toMatchObject({ kind: "search", search: null });
    expect(plan(call("search_tools", { query: "open a pull request" }))).toMatchObject({
      kind: "search",
      search: { query: "open a pull request", limit: 10 },
    });
    expect(plan(call("search_tools", { query: "x", limit: 50 }))).toMatchObject({ search: { limit: 50 } });
    expect(plan(call("gh__echo", {}))).toMatchObject({ kind: "routed", name: "echo" });
    // The same server in list mode lists its members.
    expect(planRequest({ ...server, discovery: "list" }, list, { protocolVersion: REVISION }).kind).toBe(
      "fanout",
    );
  });

  it("refuses bad search_tools and call_tool arguments with the invalid-params error", () => {
    expect(invalid(call("search_tools", { query: "" }))).toMatch(/query must not be empty/);
    expect(invalid(call("search_tools", { query: "   " }))).toMatch(/query must not be empty/);
    expect(invalid(call("search_tools", { query: "q".repeat(513) }))).toMatch(/at most 512/);
    expect(invalid(call("search_tools", { query: 5 }))).toMatch(/query must be a string/);
    expect(invalid(call("search_tools", {}))).toMatch(/query must be a string/);
    for (const limit of [0, 51, 1.5, "3", null]) {
      expect(invalid(call("search_tools", { query: "x", limit }))).toMatch(
        /limit must be an integer from 1 to 50/,
      );
    }
    expect(invalid(call("search_tools", { query: "x", extra: 1 }))).toMatch(/unknown argument extra/);
    expect(invalid(call("search_tools", "query"))).toMatch(/arguments must be an object/);
    expect(invalid(call("call_tool", { name: "gh__echo", arguments: [1] }))).toMatch(/must be an object/);
    expect(invalid(call("call_tool", { name: "gh__echo", arguments: "x" }))).toMatch(/must be an object/);
    expect(invalid(call("call_tool", { arguments: {} }))).toMatch(/name must be a tool name/);
    expect(invalid(call("call_tool", ["gh__echo"]))).toMatch(/arguments must be an object/);
    expect(invalid(call("call_tool", { name: "call_tool" }))).toMatch(/call it directly/);
  });

  it("unwraps call_tool into the tools/call of its tool, keeping id and _meta", () => {
    const msg = JSON.parse(call("call_tool", { name: "gh__echo", arguments: { text: "hi" } }).toString());
    expect(unwrapCallTool(msg)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "gh__echo", arguments: { text: "hi" }, _meta: meta },
    });
    const bare = JSON.parse(call("call_tool", { name: "gh__echo" }).toString());
    expect(unwrapCallTool(bare)?.params).toEqual({ name: "gh__echo", _meta: meta });
    expect(unwrapCallTool(JSON.parse(call("search_tools", { name: "gh__echo" }).toString()))).toBeNull();
    expect(unwrapCallTool(JSON.parse(call("call_tool", { name: "search_tools" }).toString()))).toBeNull();
    expect(searchArgs(1, { arguments: { query: "a", limit: 3 } })).toEqual({ query: "a", limit: 3 });
  });
});
