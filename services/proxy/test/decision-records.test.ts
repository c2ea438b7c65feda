// @stores both: a decision is written in its invocation's statement.
import { client, newTenant, startUpstream, type TestApp, token, type Upstream } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "./helpers.ts";

// An allowed or warned call's decision is written with its invocation (docs/policy.md
// "Decisions"): with the durable `pending` row before the 202, in the deferred batch of a streaming
// record; a deny's is committed before the 403.

let upstream: Upstream;
let gw: TestApp;
const releases: Array<() => void> = [];

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    if (req.url?.startsWith("/slow")) {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first ");
      releases.push(() => res.end("last"));
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  gw = await startGateway({ GW_STREAM_RECORD_DEFER_MS: "300", GW_RATE_LIMIT_BURST: "1000" });
});
afterAll(async () => {
  for (const r of releases) r();
  await gw?.close();
  await upstream?.close();
});

async function tenant(policy: Record<string, unknown>) {
  const call = client(gw.url, await token(newTenant()));
  const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: upstream.url })).json
    .id as string;
  const slow = (await call("POST", "/v1/agents", { name: "s", upstream_url: `${upstream.url}/slow` })).json
    .id as string;
  expect((await call("PUT", "/v1/policy", policy)).status).toBe(200);
  return { call, agent, slow };
}

type Row = Record<string, unknown>;
const decisions = async (call: Awaited<ReturnType<typeof tenant>>["call"], q = "") =>
  (await call("GET", `/v1/policy/decisions?limit=100${q}`)).json as { total: number; data: Row[] };

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  let v = await read();
  for (let i = 0; i < 200 && !done(v); i++) {
    await new Promise((r) => setTimeout(r, 25));
    v = await read();
  }
  return v;
}

describe("the decision travels with its invocation", () => {
  it("transactional: the decision is committed with the pending row, before the 202", async () => {
    const { call, agent } = await tenant({ default: "warn" });
    const res = await call("POST", `/v1/proxy/${agent}`, "x", { "content-type": "text/plain" });
    expect(res.status).toBe(202);
    // Read at once, no waiting: both were in the statement the 202 waited for.
    const d = await decisions(call);
    expect(d.total).toBe(1);
    expect(d.data[0]).toMatchObject({ agent_id: agent, protocol: "http", action: "warn", matched_rule: "" });
    const inv = await call("GET", `/v1/invocations/${res.json.invocation_id}`);
    expect(inv.status).toBe(200);
  });

  it("deny: the decision is committed before the 403, and no invocation exists", async () => {
    const t = await tenant({ default: "deny" });
    const res = await t.call("POST", `/v1/proxy/${t.agent}/stream`, "x", { "content-type": "text/plain" });
    expect(res.status).toBe(403);
    const d = await decisions(t.call);
    expect(d.total).toBe(1);
    expect(d.data[0]).toMatchObject({ agent_id: t.agent, action: "deny", matched_rule: "" });
    expect((await t.call("GET", `/v1/invocations?agent_id=${t.agent}`)).json.total).toBe(0);
  });

  it("streaming: every quick call's decision lands with its record, one each", async () => {
    const { call, agent } = await tenant({ default: "warn" });
    const n = 12;
    const answers = await Promise.all(
      Array.from({ length: n }, () =>
        call("POST", `/v1/proxy/${agent}/stream`, "x", { "content-type": "text/plain" }),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const rows = await until(
      async () => (await call("GET", `/v1/invocations?agent_id=${agent}&limit=100`)).json.data as Row[],
      (r) => r.length === n,
    );
    expect(rows).toHaveLength(n);
    const d = await until(
      () => decisions(call),
      (x) => x.total >= n,
    );
    expect(d.total).toBe(n);
    expect(new Set(d.data.map((r) => r.id)).size).toBe(n);
    for (const r of d.data) expect(r).toMatchObject({ agent_id: agent, action: "warn" });
  });

  it("streaming past the defer point: the decision goes in with the running row", async () => {
    const { call, slow } = await tenant({ default: "allow" });
    const pending = call("POST", `/v1/proxy/${slow}/stream`, "x", { "content-type": "text/plain" });
    const running = await until(
      async () => (await call("GET", `/v1/invocations?agent_id=${slow}&status=running`)).json.total as number,
      (n) => n === 1,
    );
    expect(running).toBe(1);
    // The call is still open: its decision is there already.
    expect((await decisions(call)).data).toMatchObject([{ agent_id: slow, action: "allow" }]);
    for (const r of releases.splice(0)) r();
    expect((await pending).text).toBe("first last");
  });
});
