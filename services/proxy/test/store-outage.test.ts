// @stores once: Postgres only: an outage cut in a TCP forwarder.
import { setTimeout as sleep } from "node:timers/promises";
import { eventually, startTcpForwarder, type TcpForwarder, TEST_DATABASE_URL } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, recordDone, startGateway, upstreamPool } from "./helpers.ts";

// Postgres outages seen from outside (docs/reliability.md): the gateway reaches the test Postgres through a
// TCP forwarder this file can cut, so the outage is real (connections reset, new ones reset at once or
// left hanging) while the test database keeps serving every other suite.

const ups = upstreamPool();
let fwd: TcpForwarder | undefined;
let gw: Awaited<ReturnType<typeof startGateway>> | undefined;
let call: Caller;
let upstream: string;

// Postgres only: the embedded store (PGlite) has no network to lose.
const suite = TEST_DATABASE_URL ? describe : describe.skip;

beforeAll(async () => {
  if (!TEST_DATABASE_URL) return;
  fwd = await startTcpForwarder(new URL(TEST_DATABASE_URL));
  // No policy cache: every call reads the tenant's policy from the store (the path that answered 500).
  gw = await startGateway({ DATABASE_URL: fwd.url, GW_POLICY_CACHE_MS: "0" });
  call = await caller(gw);
  upstream = (await ups.up((_req, res) => res.end("ok"))).url;
});
afterAll(async () => {
  await gw?.close();
  await fwd?.close();
  await ups.closeAll();
});

/** Every answer's status; a 503 must carry the store's error body. */
async function calls(agent: string, n: number, path = "") {
  const res = await Promise.all(
    Array.from({ length: n }, () => call("POST", `/v1/proxy/${agent}${path}`, "x")),
  );
  for (const r of res) if (r.status === 503) expect(r.json).toEqual({ error: "store unavailable" });
  return res.map((r) => r.status);
}

/** Back: calls go through again (the first ones may still meet the dying pool). */
async function backAgain(agent: string) {
  const until = Date.now() + 60_000;
  let status = 0;
  while (status !== 202 && Date.now() < until) status = (await calls(agent, 1))[0] ?? 0;
  expect(status).toBe(202);
}

suite("Postgres outage", () => {
  it("refused: 503 store unavailable on both modes, never a 500, and callers over the limit are told so", async () => {
    const f = fwd as TcpForwarder;
    const agent = await createAgent(call, {
      upstream_url: upstream,
      max_concurrency: 2,
      rate_limit: { rps: 10_000, burst: 10_000 },
    });
    expect((await call("PUT", "/v1/policy", { default: "allow", on_error: "deny", rules: [] })).status).toBe(
      200,
    );
    expect(await calls(agent, 1)).toEqual([202]);
    await f.cut("refuse");
    try {
      const seen = [...(await calls(agent, 1)), ...(await calls(agent, 1, "/stream"))];
      // Many callers at once, more than the agent's max_concurrency: the store is what is wrong.
      seen.push(...(await calls(agent, 12)), ...(await calls(agent, 12, "/stream")));
      expect(seen.filter((s) => s !== 503)).toEqual([]);
    } finally {
      await f.restore();
    }
    await backAgain(agent);
  }, 120_000);

  it("stalled: 503 within the deadline, and callers over the limit learn that the store is down", async () => {
    const f = fwd as TcpForwarder;
    const agent = await createAgent(call, {
      upstream_url: upstream,
      max_concurrency: 2,
      rate_limit: { rps: 10_000, burst: 10_000 },
    });
    expect(await calls(agent, 1)).toEqual([202]);
    await f.cut("stall");
    try {
      // The first caller waits out the store deadline; from its answer on, the gateway knows.
      const seen = await calls(agent, 1);
      seen.push(...(await calls(agent, 12)));
      seen.push(...(await calls(agent, 12)));
      expect(seen.filter((s) => s !== 503)).toEqual([]);
    } finally {
      await f.restore();
    }
    // The next case starts on a store that answers again.
    await backAgain(agent);
  }, 120_000);

  it("streams whose answers end while the store is away: each is recorded once it is back, none left open or missing", async () => {
    const f = fwd as TcpForwarder;
    const held: Array<() => void> = [];
    const slow = await ups.up(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" }).write("first;");
      await new Promise<void>((r) => held.push(r));
      res.end("last");
    });
    const agent = await createAgent(call, {
      upstream_url: slow.url,
      rate_limit: { rps: 10_000, burst: 10_000 },
    });
    const open = (n: number) =>
      Promise.all(
        Array.from({ length: n }, () =>
          fetch(`${gw?.url}/v1/proxy/${agent}/stream`, {
            method: "POST",
            headers: { authorization: `Bearer ${call.token}` },
            body: "x",
          }),
        ),
      );
    const reached = async (n: number) => {
      while (held.length < n) await sleep(10);
    };
    // Streams whose running row went in (past GW_STREAM_RECORD_DEFER_MS, 500 ms), then streams
    // whose row is still due when the store goes away.
    const early = await open(4);
    await reached(4);
    // The early rows are in the store (a loaded machine may take longer than the defer).
    await eventually(async () => {
      for (const r of early) {
        const id = r.headers.get("x-gateway-invocation-id") ?? "";
        if ((await call("GET", `/v1/invocations/${id}`)).status !== 200) return undefined;
      }
      return true;
    }, 60_000);
    const late = await open(4);
    await reached(8);
    await f.cut("refuse");
    const ids = [...early, ...late].map((r) => r.headers.get("x-gateway-invocation-id") ?? "");
    try {
      for (const release of held) release();
      // The callers get their whole answers: the record is not theirs to wait for.
      for (const r of [...early, ...late]) {
        expect(r.status).toBe(200);
        expect(await r.text()).toBe("first;last");
      }
      // The records are held while the store is away (their writes are retried, not dropped).
      await sleep(1_500);
    } finally {
      await f.restore();
    }
    expect(new Set(ids).size).toBe(8);
    // A record held through the outage is retried with a back-off of up to 5 s per attempt
    // (docs/reliability.md), and a busy machine stretches each attempt: the wait is generous, the
    // point is that every record lands, whole.
    for (const id of ids) {
      const rec = await recordDone(call, id, 60_000);
      expect(rec.json, id).toMatchObject({ id, status: "succeeded", upstream_status: 200 });
    }
  }, 180_000);
});
