// @stores once: the MCP protocol through a virtual server.
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { startUpstream, type TestApp, type Upstream } from "@gw/testkit";
import { isBlockedIp, ssrfPolicy } from "@gw/upstream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, recordDone, startGateway } from "../helpers.ts";
import { memberAgent, memberPool, rpc, stream, transact, virtualAgent } from "./fixture.ts";

// Members that misbehave (garbage, a hang, down) beside members that answer; members that
// paginate; a member's own credential. The gateway itself never answers 5xx for them, never hangs.

let gw: TestApp;
let call: Caller;
const pool = memberPool();

beforeAll(async () => {
  // A short transactional time-out bounds a hanging member's fan-out (never asserted as a duration).
  gw = await startGateway({ GW_TRANSACT_TIMEOUT_MS: "1500", GW_STREAM_FIRST_BYTE_TIMEOUT_MS: "1500" });
  call = await caller(gw);
});
afterEach(() => pool.closeAll());
afterAll(() => gw?.close());

async function raw(handler: Parameters<typeof startUpstream>[0]): Promise<Upstream> {
  const u = await startUpstream(handler);
  pool.add(u);
  return u;
}

const ok = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: "2.0", id, result });

describe("virtual MCP server: members that fail", () => {
  it("lists the others' tools when a member answers garbage, hangs or is down, and says which failed", async () => {
    const alpha = await pool.v2("alpha", { tools: ["t1"] });
    const garbage = await raw((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("this is not json");
    });
    const hanging = await raw(() => {});
    const down = await raw((_req, res) => res.end());
    const downUrl = down.url;
    await down.close();
    const a = await memberAgent(call, alpha.url);
    const g = await memberAgent(call, `${garbage.url}/mcp`);
    const h = await memberAgent(call, `${hanging.url}/mcp`);
    const d = await memberAgent(call, `${downUrl}/mcp`);
    const v = await virtualAgent(call, [
      { agent_id: g, prefix: "g" },
      { agent_id: a, prefix: "a" },
      { agent_id: h, prefix: "h" },
      { agent_id: d, prefix: "d" },
    ]);
    const res = await stream(call, v, rpc("tools/list"));
    expect(res.status).toBe(200);
    expect(res.json.result.tools.map((t: { name: string }) => t.name)).toEqual(["a__t1"]);
    const t = await transact(call, v, rpc("tools/list"));
    expect(t.body.result.tools.map((x: { name: string }) => x.name)).toEqual(["a__t1"]);
    // The log names each failed member and why. The metric gw.virtual.member_failures is asserted
    // as exported over OTLP in services/gateway/test/virtual-member-failure-metric.test.ts.
    const lines = gw.logs.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === "virtual server member gave no usable answer");
    expect(new Set(lines.map((l) => l.member_agent_id))).toEqual(new Set([g, h, d]));
    const reasons = (id: string) =>
      new Set(lines.filter((l) => l.member_agent_id === id).map((l) => l.reason));
    expect(reasons(g)).toEqual(new Set(["invalid_answer"]));
    expect(reasons(h)).toEqual(new Set(["timeout"]));
    // A refused connection says so at once; on a machine stalled past the member's time-out, the
    // time-out may come first on one of the two calls.
    expect(reasons(d).has("unreachable")).toBe(true);
  });

  it("fails a routed call to a failing member like any upstream failure", async () => {
    const hanging = await raw(() => {});
    const down = await raw((_req, res) => res.end());
    const downUrl = down.url;
    await down.close();
    const h = await memberAgent(call, `${hanging.url}/mcp`);
    const d = await memberAgent(call, `${downUrl}/mcp`);
    const v = await virtualAgent(call, [
      { agent_id: h, prefix: "h" },
      { agent_id: d, prefix: "d" },
    ]);
    const timedOut = await stream(call, v, rpc("tools/call", { name: "h__x", arguments: {} }));
    expect(timedOut.status).toBe(504);
    expect(timedOut.json).toEqual({ error: "upstream timed out" });
    const refused = await stream(call, v, rpc("tools/call", { name: "d__x", arguments: {} }));
    expect(refused.status).toBe(502);
    expect(refused.json).toEqual({ error: "upstream unreachable" });
    const t = await transact(call, v, rpc("tools/call", { name: "d__x", arguments: {} }));
    expect(t.polled?.json).toMatchObject({ status: "failed", routed_agent_id: d });
    // Every member down: a list fails like an upstream that cannot be reached.
    const all = await stream(call, v, rpc("tools/list"));
    expect([502, 504]).toContain(all.status);
    expect(all.json.error).toMatch(/^upstream/);
  });

  it("drops a deactivated or deleted member's tools at once, without refusing the write", async () => {
    const alpha = await pool.v2("alpha", { tools: ["t1"] });
    const beta = await pool.v2("beta", { tools: ["t2"] });
    const a = await memberAgent(call, alpha.url);
    const b = await memberAgent(call, beta.url);
    const v = await virtualAgent(call, [
      { agent_id: a, prefix: "a" },
      { agent_id: b, prefix: "b" },
    ]);
    const names = async () =>
      ((await stream(call, v, rpc("tools/list"))).json.result.tools as Array<{ name: string }>).map(
        (t) => t.name,
      );
    expect(await names()).toEqual(["a__t1", "b__t2"]);
    expect((await call("PATCH", `/v1/agents/${a}`, { status: "inactive" })).status).toBe(200);
    expect(await names()).toEqual(["b__t2"]);
    expect((await call("DELETE", `/v1/agents/${b}`)).status).toBe(204);
    expect(await names()).toEqual([]);
    const routed = await stream(call, v, rpc("tools/call", { name: "b__t2", arguments: {} }));
    expect(routed.json.error).toMatchObject({ code: -32602 });
  });

  it("walks members' own pages with one opaque cursor", async () => {
    const pages: Record<string, { tools: Array<{ name: string }>; nextCursor?: string }> = {
      "": { tools: [{ name: "p1" }], nextCursor: "page-2" },
      "page-2": { tools: [{ name: "p2" }] },
    };
    const paged = await raw((_req, res, body) => {
      const msg = JSON.parse(body.toString());
      const page = pages[msg.params?.cursor ?? ""];
      res.writeHead(200, { "content-type": "application/json" });
      res.end(ok(msg.id, { ...page, resultType: "complete", ttlMs: 5000, cacheScope: "public" }));
    });
    const alpha = await pool.v2("alpha", { tools: ["t1"] });
    const p = await memberAgent(call, `${paged.url}/mcp`);
    const a = await memberAgent(call, alpha.url);
    const v = await virtualAgent(call, [
      { agent_id: p, prefix: "p" },
      { agent_id: a, prefix: "a" },
    ]);
    const first = (await stream(call, v, rpc("tools/list"))).json.result;
    expect(first.tools.map((t: { name: string }) => t.name)).toEqual(["p__p1", "a__t1"]);
    // The smallest ttlMs; private because one member did not say public.
    expect(first).toMatchObject({ ttlMs: 0, cacheScope: "private" });
    expect(typeof first.nextCursor).toBe("string");
    expect(first.nextCursor).not.toContain("page-2");
    const second = (await stream(call, v, rpc("tools/list", { cursor: first.nextCursor }))).json.result;
    expect(second.tools.map((t: { name: string }) => t.name)).toEqual(["p__p2"]);
    expect(second).toMatchObject({ ttlMs: 5000, cacheScope: "public" });
    expect(second.nextCursor).toBeUndefined();
  });

  it("calls each member with its own credential, never another's", async () => {
    const seen: Array<string | undefined> = [];
    const member = (answer: string) =>
      raw((req, res, body) => {
        seen.push(req.headers.authorization);
        const msg = JSON.parse(body.toString());
        res.writeHead(200, { "content-type": "application/json" });
        res.end(ok(msg.id, { tools: [{ name: answer }], resultType: "complete" }));
      });
    const one = await member("one");
    const two = await member("two");
    const cred = await call("POST", "/v1/credentials", {
      name: "c",
      kind: "bearer",
      secret: "member-secret-1",
    });
    expect(cred.status).toBe(201);
    const m1 = await createAgent(call, {
      upstream_url: `${one.url}/mcp`,
      protocol: "mcp",
      credential_ref: cred.json.id,
    });
    const m2 = await memberAgent(call, `${two.url}/mcp`);
    const v = await virtualAgent(call, [
      { agent_id: m1, prefix: "x" },
      { agent_id: m2, prefix: "y" },
    ]);
    const res = await stream(call, v, rpc("tools/list"));
    expect(res.json.result.tools.map((t: { name: string }) => t.name)).toEqual(["x__one", "y__two"]);
    // Every request to a member (the gateway's probe of its revision included) with its own credential.
    expect(one.received.map((r) => r.headers.authorization)).toEqual([
      "Bearer member-secret-1",
      "Bearer member-secret-1",
    ]);
    expect(two.received.map((r) => r.headers.authorization)).toEqual([undefined, undefined]);
    expect(res.text).not.toContain("member-secret-1");
    expect(seen).toHaveLength(4);
  });
});

describe("virtual MCP server: a member the dial-time SSRF guard refuses", () => {
  it("lists the good member's tools, and a routed call to the refused member fails like any upstream call", async () => {
    // This deployment exempts only IPv6 loopback: the good member listens on [::1]; the other
    // member's upstream is the machine's own name, which resolves to IPv4 loopback, refused when
    // it is dialled (names pass the write-time check).
    const name = hostname();
    const addrs = await lookup(name, { all: true }).catch(() => []);
    const policy = ssrfPolicy(["::1/128"]);
    expect(
      addrs.length > 0 && addrs.some((a) => isBlockedIp(a.address, policy)),
      `${name} must resolve to a refused address on this machine`,
    ).toBe(true);
    const strict = await startGateway({ GW_SSRF_ALLOW_CIDRS: "::1/128" });
    pool.add(strict);
    const c = await caller(strict);
    const good = await pool.v2("alpha", { tools: ["t1"], host: "::1" });
    const target = await raw((_req, res) => res.end("reached"));
    const g = await memberAgent(c, good.url);
    const b = await memberAgent(c, `http://${name}:${target.port}/mcp`);
    const v = await virtualAgent(c, [
      { agent_id: b, prefix: "b" },
      { agent_id: g, prefix: "g" },
    ]);

    const listed = await stream(c, v, rpc("tools/list"));
    expect(listed.status).toBe(200);
    expect(listed.json.result.tools.map((t: { name: string }) => t.name)).toEqual(["g__t1"]);
    const polled = await transact(c, v, rpc("tools/list"));
    expect(polled.body.result.tools.map((t: { name: string }) => t.name)).toEqual(["g__t1"]);
    const failed = strict.logs.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === "virtual server member gave no usable answer");
    expect(failed.map((l) => [l.member_agent_id, l.mcp_method, l.reason])).toEqual([
      [b, "tools/list", "ssrf_blocked"],
      [b, "tools/list", "ssrf_blocked"],
    ]);

    // Routed to the refused member: the answer a plain agent at that address gets.
    const routed = await stream(c, v, rpc("tools/call", { name: "b__x", arguments: {} }));
    expect(routed.status).toBe(502);
    expect(routed.json).toEqual({ error: "upstream address is not allowed" });
    const record = await recordDone(c, routed.headers.get("x-gateway-invocation-id") as string);
    expect(record.json).toMatchObject({ status: "failed", error_class: "ssrf_blocked", routed_agent_id: b });
    const t = await transact(c, v, rpc("tools/call", { name: "b__x", arguments: {} }));
    expect(t.accepted.status).toBe(202);
    expect(t.polled?.json).toMatchObject({
      status: "failed",
      error_class: "ssrf_blocked",
      routed_agent_id: b,
    });
    // Routed to the good member: answered.
    const ok = await stream(c, v, rpc("tools/call", { name: "g__t1", arguments: { text: "hi" } }));
    expect(ok.json.result.content).toEqual([{ type: "text", text: "alpha:t1:hi" }]);
    expect(target.received).toHaveLength(0);
  });
});
