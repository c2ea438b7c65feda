import { createServer, type Server, Socket } from "node:net";
import { TEST_DATABASE_URL } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, startGateway, upstreamPool } from "./helpers.ts";

// Postgres outages seen from outside (issue 24): the gateway reaches the test Postgres through a
// TCP forwarder this file can cut, so the outage is real (connections reset, new ones refused or
// left hanging) while the test database keeps serving every other suite.

type Forwarder = {
  url: string;
  /** "refuse": every connection reset and new ones refused; "stall": connections accepted, never answered. */
  cut: (mode: "refuse" | "stall") => Promise<void>;
  restore: () => Promise<void>;
  close: () => Promise<void>;
};

async function forwarder(target: URL): Promise<Forwarder> {
  const sockets = new Set<Socket>();
  let mode: "open" | "stall" = "open";
  let server: Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        sockets.add(client);
        client.on("close", () => sockets.delete(client));
        client.on("error", () => {});
        if (mode === "stall") return; // accepted, never answered
        const db = new Socket();
        sockets.add(db);
        db.on("close", () => sockets.delete(db));
        db.on("error", () => client.destroy());
        client.on("error", () => db.destroy());
        db.connect(Number(target.port || 5432), target.hostname, () => {
          client.pipe(db);
          db.pipe(client);
        });
        client.on("close", () => db.destroy());
        db.on("close", () => client.destroy());
      });
      server.listen(port, "127.0.0.1", () => {
        const a = server.address();
        if (a && typeof a === "object") port = a.port;
        resolve();
      });
    });
  const dropAll = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  await listen();
  const url = new URL(target.href);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.href,
    cut: async (m) => {
      dropAll();
      if (m === "stall") {
        mode = "stall";
        return;
      }
      await new Promise<void>((r) => server.close(() => r()));
    },
    restore: async () => {
      dropAll();
      if (mode === "stall") mode = "open";
      else await listen();
    },
    close: async () => {
      dropAll();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const ups = upstreamPool();
let fwd: Forwarder | undefined;
let gw: Awaited<ReturnType<typeof startGateway>> | undefined;
let call: Caller;
let upstream: string;

// Postgres only: the embedded store (PGlite) has no network to lose.
const suite = TEST_DATABASE_URL ? describe : describe.skip;

beforeAll(async () => {
  if (!TEST_DATABASE_URL) return;
  fwd = await forwarder(new URL(TEST_DATABASE_URL));
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

suite("Postgres outage (issue 24)", () => {
  it("refused: 503 store unavailable on both modes, never a 500, and callers over the limit are told so", async () => {
    const f = fwd as Forwarder;
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
    // Back: calls go through again (the first may still meet the dying pool).
    const until = Date.now() + 20_000;
    let status = 0;
    while (status !== 202 && Date.now() < until) status = (await calls(agent, 1))[0] ?? 0;
    expect(status).toBe(202);
  });

  it("stalled: 503 within the deadline, and callers over the limit learn that the store is down", async () => {
    const f = fwd as Forwarder;
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
  });
});
