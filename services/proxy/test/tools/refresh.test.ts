import { startModernUpstream, startUpstream, type TestApp } from "@gw/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import { closeAll, closers, mcpAgent, statuses, tool, toolsUpstream } from "./support.ts";

// POST /v1/agents/{id}/tools/refresh: the gateway lists a server's tools itself (docs/tools.md).

let gw: TestApp;
let call: Caller;

beforeAll(async () => {
  gw = await startGateway();
});
beforeEach(async () => {
  call = await caller(gw);
});
afterEach(closeAll);
afterAll(async () => {
  await gw?.close();
});

async function bearer(secret: string): Promise<string> {
  const res = await call("POST", "/v1/credentials", { name: "mcp", kind: "bearer", secret });
  expect(res.status).toBe(201);
  return res.json.id;
}

describe("refresh", () => {
  it("initializes an older stateful server with the agent's credential, walks every page, ends the session", async () => {
    const up = await toolsUpstream({ tools: ["a", "b", "c"].map((n) => tool(n)), pageSize: 2 });
    const agentId = await mcpAgent(call, up.url, { credential_ref: await bearer("s3cret-token") });
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status).toBe(200);
    expect(res.json.complete).toBe(true);
    expect(res.json.data.map((t: { name: string }) => t.name)).toEqual(["a", "b", "c"]);
    expect(res.json.refreshed_at).toEqual(expect.any(String));
    expect(res.text).not.toContain("s3cret-token");
    expect(up.requests.map((r) => r.rpcMethod ?? r.httpMethod)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/list",
      "DELETE",
    ]);
    expect(up.requests.every((r) => r.authorization === "Bearer s3cret-token")).toBe(true);
    const sid = up.requests[1]?.sessionId;
    expect(sid).toEqual(expect.any(String));
    expect(up.requests.slice(1).every((r) => r.sessionId === sid)).toBe(true);

    // Pinned, then the server changes a tool and drops another: the next refresh shows both.
    await call("POST", `/v1/agents/${agentId}/tools/pin`);
    up.tools[0] = tool("a", "changed");
    up.tools.pop();
    const again = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(statuses(again)).toEqual({ a: "drifted", b: "pinned", c: "removed" });
  });

  it("asks a 2026-07-28 server (the official v2 SDK) statelessly: one request, no initialize, no session", async () => {
    const up = await startModernUpstream([tool("a"), tool("b", "the b tool")]);
    closers.push(up.close);
    const agentId = await mcpAgent(call, up.url, { mcp_protocol_version: "2026-07-28" });
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ complete: true });
    expect(statuses(res)).toEqual({ a: "unpinned", b: "unpinned" });
    expect(res.json.data[1].description).toBe("the b tool");
    expect(up.requests).toEqual([{ method: "tools/list", version: "2026-07-28", session: null }]);

    // The server drops a tool: the next stateless list is complete, and a pinned absentee is removed.
    await call("POST", `/v1/agents/${agentId}/tools/pin`);
    up.tools.pop();
    expect(statuses(await call("POST", `/v1/agents/${agentId}/tools/refresh`))).toEqual({
      a: "pinned",
      b: "removed",
    });
  });

  it("answers 502 with a plain error for a server that is not an MCP server, and 404/400 as the catalog does", async () => {
    const up = await startUpstream((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" }).end("<html>hello</html>");
    });
    closers.push(up.close);
    const agentId = await mcpAgent(call, `${up.url}/mcp`);
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: "the upstream did not answer tools/list as an MCP server" });
    const other = await caller(gw);
    expect((await other("POST", `/v1/agents/${agentId}/tools/refresh`)).status).toBe(404);
    const http = await call("POST", "/v1/agents", { name: "h", upstream_url: `${up.url}/` });
    expect((await call("POST", `/v1/agents/${http.json.id}/tools/refresh`)).status).toBe(400);
  });

  it("answers 502 when the server is unreachable", async () => {
    const up = await startUpstream(() => {});
    await up.close();
    const agentId = await mcpAgent(call, `${up.url}/mcp`);
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: "upstream unreachable" });
  });
});
