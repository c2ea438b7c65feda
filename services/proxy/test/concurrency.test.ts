// @stores both: calls in flight are counted in Redis or in process.
import type { ServerResponse } from "node:http";
import { eventually } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, startGateway, upstreamPool } from "./helpers.ts";

const ups = upstreamPool();
let gw: Awaited<ReturnType<typeof startGateway>>;
/** Streams the upstream holds open until the test lets them go. */
const held: ServerResponse[] = [];
let upstream: string;

beforeAll(async () => {
  gw = await startGateway({
    GW_TENANT_MAX_CONCURRENCY: "3",
    GW_RATE_LIMIT_RPS: "1000",
    GW_RATE_LIMIT_BURST: "1000",
  });
  const u = await ups.up((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("start\n");
    held.push(res);
  });
  upstream = u.url;
});
afterAll(async () => {
  for (const r of held) r.end();
  await gw.close();
  await ups.closeAll();
});

/** Opens a stream and returns once its head arrived; `abort` closes it from the caller's side. */
async function open(call: Caller, agent: string) {
  const ac = new AbortController();
  const res = await fetch(`${gw.url}/v1/proxy/${agent}/stream`, {
    method: "POST",
    headers: { authorization: `Bearer ${call.token}` },
    body: "x",
    signal: ac.signal,
  });
  return { res, abort: () => ac.abort() };
}

async function refusal(call: Caller, agent: string) {
  const r = await call("POST", `/v1/proxy/${agent}/stream`, "x");
  return { status: r.status, body: r.json, retryAfter: r.headers.get("retry-after") };
}

describe("calls in flight (docs/rate-limit.md)", () => {
  it("caps an agent at its max_concurrency and a tenant at GW_TENANT_MAX_CONCURRENCY; others unaffected", async () => {
    const x = await caller(gw);
    const y = await caller(gw);
    const a1 = await createAgent(x, { upstream_url: upstream, max_concurrency: 2 });
    const a2 = await createAgent(x, { upstream_url: upstream });
    const ya = await createAgent(y, { upstream_url: upstream });

    const s1 = await open(x, a1);
    const s2 = await open(x, a1);
    expect([s1.res.status, s2.res.status]).toEqual([200, 200]);
    // The agent's own bound.
    expect(await refusal(x, a1)).toEqual({
      status: 429,
      body: { error: "too many concurrent calls" },
      retryAfter: "1",
    });
    // Another agent of the tenant still has room for one: the tenant's bound is 3.
    const s3 = await open(x, a2);
    expect(s3.res.status).toBe(200);
    expect((await refusal(x, a2)).status).toBe(429);
    // A transactional call counts too, and a refused one creates no invocation.
    const tx = await x("POST", `/v1/proxy/${a2}`, "x");
    expect(tx.status).toBe(429);
    expect(tx.json).toEqual({ error: "too many concurrent calls" });

    // Tenant Y is not affected by X's saturation.
    const ys = await open(y, ya);
    expect(ys.res.status).toBe(200);

    // A stream the caller aborts gives its slot back.
    s1.abort();
    const again = await eventually(async () => {
      const r = await open(x, a1);
      if (r.res.status !== 200) {
        await r.res.body?.cancel();
        return undefined;
      }
      return r;
    });
    for (const s of [s2, s3, ys]) s.abort();
    again.abort();
    // Streaming records are written when the stream ends: 4 for X, none for a refused call.
    const total = await eventually(async () => {
      const list = await x("GET", "/v1/invocations?limit=100");
      return list.json.total >= 4 ? list.json.total : undefined;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(total).toBe(4);
    expect((await x("GET", "/v1/invocations?limit=100")).json.total).toBe(4);
  });
});
