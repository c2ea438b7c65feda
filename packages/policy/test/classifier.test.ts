import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createUpstreamDispatcher, ssrfPolicy } from "@gw/upstream";
import * as v from "valibot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePolicy, evaluatePolicy, PolicyDocument, type PolicyInput } from "../src/index.ts";

type Seen = { body: unknown; headers: IncomingMessage["headers"] };
const seen: Seen[] = [];
let server: Server;
let base: string;

// One real local webhook; the path picks its behaviour.
const behaviours: Record<string, (res: ServerResponse) => void> = {
  "/allow": (res) => res.writeHead(200, { "content-type": "application/json" }).end('{"action":"allow"}'),
  "/warn": (res) =>
    res
      .writeHead(200, { "content-type": "application/json" })
      .end('{"action":"warn","reason":"new tool\\r\\nX-Evil: 1"}'),
  "/deny": (res) =>
    res.writeHead(200, { "content-type": "application/json" }).end('{"action":"deny","reason":"blocked"}'),
  "/slow": (res) => {
    const t = setTimeout(() => res.writeHead(200).end('{"action":"allow"}'), 5_000);
    res.on("close", () => clearTimeout(t));
  },
  "/garbage": (res) => res.writeHead(200, { "content-type": "application/json" }).end("not json {"),
  "/extra-field": (res) => res.writeHead(200).end('{"action":"allow","admin":true}'),
  "/bad-action": (res) => res.writeHead(200).end('{"action":"ALLOW"}'),
  "/500": (res) => res.writeHead(500, { "content-type": "application/json" }).end('{"action":"allow"}'),
  "/redirect": (res) => res.writeHead(302, { location: "/allow" }).end(),
  "/huge": (res) => res.writeHead(200).end(`{"action":"allow","reason":"${"x".repeat(100_000)}"}`),
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ body: JSON.parse(Buffer.concat(chunks).toString("utf8")), headers: req.headers });
      (behaviours[req.url ?? ""] ?? ((r: ServerResponse) => r.writeHead(404).end()))(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await dispatcher.close();
});

// The runtime's dispatcher, with loopback allowed the way tests allow it (GW_SSRF_ALLOW_CIDRS).
const dispatcher = createUpstreamDispatcher({ policy: ssrfPolicy(["127.0.0.0/8"]), connectTimeoutMs: 2_000 });

const input: PolicyInput = {
  tenantId: "t_classifier",
  agentId: "agt_1",
  protocol: "mcp",
  rpcMethod: "tools/call",
  mcpTool: "delete_file",
  model: "gpt-x",
  bodySize: 42,
  principal: { sub: "u", scopes: [], claims: {} },
  agentName: "a",
  mode: "streaming",
  arguments: undefined,
};

async function decide(
  path: string,
  opts: { onError?: string; timeoutMs?: number; d?: typeof dispatcher } = {},
) {
  const doc = v.parse(PolicyDocument, {
    on_error: opts.onError ?? "deny",
    rules: [
      { action: "allow", match: { tools: ["read_*"] } },
      {
        classifier: { url: `${base}${path}`, timeout_ms: opts.timeoutMs ?? 1_000 },
        match: { protocols: ["mcp"] },
      },
    ],
  });
  const before = seen.length;
  const d = await evaluatePolicy(compilePolicy(doc, 1), input, { dispatcher: opts.d ?? dispatcher });
  return { d, received: seen.slice(before) };
}

describe("classifier webhooks", () => {
  it("allow: the answer decides, matched rule is the classifier rule's position", async () => {
    const { d, received } = await decide("/allow");
    expect(d).toEqual({ action: "allow", matchedRule: "2", reason: "classifier" });
    expect(received).toHaveLength(1);
  });

  it("the webhook receives exactly the six metadata fields, no body, no caller token", async () => {
    const { received } = await decide("/allow");
    const got = received[0] as Seen;
    expect(got.body).toEqual({
      tenant_id: "t_classifier",
      agent_id: "agt_1",
      protocol: "mcp",
      mcp_method: "tools/call",
      mcp_tool: "delete_file",
      model: "gpt-x",
    });
    expect(Object.keys(got.body as object).sort()).toEqual(
      ["agent_id", "mcp_method", "mcp_tool", "model", "protocol", "tenant_id"].sort(),
    );
    expect(got.headers.authorization).toBeUndefined();
    expect(got.headers["content-type"]).toBe("application/json");
  });

  it("http calls send nulls for the MCP fields", async () => {
    const doc = v.parse(PolicyDocument, { rules: [{ classifier: { url: `${base}/allow` } }] });
    const before = seen.length;
    await evaluatePolicy(
      compilePolicy(doc, 1),
      { ...input, protocol: "http", rpcMethod: null, mcpTool: null, model: null },
      { dispatcher },
    );
    expect(seen[before]?.body).toEqual({
      tenant_id: "t_classifier",
      agent_id: "agt_1",
      protocol: "http",
      mcp_method: null,
      mcp_tool: null,
      model: null,
    });
  });

  it("warn: the reason is kept, made printable (it may become a header value)", async () => {
    const { d } = await decide("/warn");
    expect(d.action).toBe("warn");
    expect(d.matchedRule).toBe("2");
    expect(d.reason).toBe("classifier: new tool??X-Evil: 1");
  });

  it("deny", async () => {
    expect((await decide("/deny")).d).toEqual({
      action: "deny",
      matchedRule: "2",
      reason: "classifier: blocked",
    });
  });

  it("slow: past the rule's time-out → on_error, matched rule empty", async () => {
    const { d } = await decide("/slow", { timeoutMs: 200 });
    expect(d).toEqual({ action: "deny", matchedRule: "", reason: "on_error: classifier timed out" });
    expect((await decide("/slow", { timeoutMs: 200, onError: "warn" })).d.action).toBe("warn");
  });

  it.each([
    ["/garbage", "answer malformed"],
    ["/extra-field", "answer malformed"],
    ["/bad-action", "answer malformed"],
    ["/huge", "answer malformed"],
    ["/500", "answered an error status"],
    ["/redirect", "answered an error status"],
  ])("%s → on_error", async (path, why) => {
    const { d } = await decide(path, { onError: "allow" });
    expect(d).toEqual({ action: "allow", matchedRule: "", reason: `on_error: classifier ${why}` });
  });

  it("a redirect is never followed", async () => {
    const { received } = await decide("/redirect");
    expect(received).toHaveLength(1);
  });

  it("the SSRF guard applies: a loopback classifier without the allowance is unreachable → on_error", async () => {
    const strict = createUpstreamDispatcher({ policy: ssrfPolicy([]), connectTimeoutMs: 2_000 });
    try {
      const { d, received } = await decide("/allow", { d: strict });
      expect(d).toEqual({ action: "deny", matchedRule: "", reason: "on_error: classifier unreachable" });
      expect(received).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it("a rule before the classifier that matches means the webhook is never called", async () => {
    const doc = v.parse(PolicyDocument, {
      rules: [{ action: "allow", match: { tools: ["read_*"] } }, { classifier: { url: `${base}/deny` } }],
    });
    const before = seen.length;
    const d = await evaluatePolicy(compilePolicy(doc, 1), { ...input, mcpTool: "read_file" }, { dispatcher });
    expect(d.action).toBe("allow");
    expect(seen.length).toBe(before);
  });
});
