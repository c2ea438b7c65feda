import { once } from "node:events";
import { eventually, newTenant, startUpstream, token } from "@gw/testkit";
import { Client, request } from "undici";
import { describe, expect, it } from "vitest";
import { spawnGateway } from "./helpers.ts";

describe("graceful shutdown", () => {
  it("finishes an in-flight stream on SIGTERM, then exits 0", async () => {
    let finishUpstream: (() => void) | undefined;
    const u = await startUpstream(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first;");
      await new Promise<void>((r) => {
        finishUpstream = r;
      });
      res.end("last");
    });
    const { child, url: base, output } = await spawnGateway({});
    try {
      const auth = {
        authorization: `Bearer ${await token(newTenant())}`,
        "content-type": "application/json",
      };
      const created = await request(`${base}/v1/agents`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "slow", upstream_url: u.url }),
      });
      const agent = ((await created.body.json()) as { id: string }).id;

      const res = await request(`${base}/v1/proxy/${agent}/stream`, {
        method: "POST",
        headers: auth,
        body: "x",
      });
      expect(res.statusCode).toBe(200);
      const chunks: string[] = [];
      const reading = (async () => {
        for await (const c of res.body) chunks.push(c.toString());
      })();
      // The stream is open: ask the gateway to stop, then let the upstream finish.
      await new Promise((r) => setTimeout(r, 100));
      child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 200));
      finishUpstream?.();
      await reading;
      expect(chunks.join("")).toBe("first;last");
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect(output()).toContain("shutdown complete");
    } finally {
      child.kill("SIGKILL");
      await u.close();
    }
  });
});

describe("graceful shutdown on keep-alive connections", () => {
  it("calls in flight finish and close their connection, a request that still arrives on one gets a clean 503, the process exits", async () => {
    const held: Array<() => void> = [];
    let allArrived: (() => void) | undefined;
    const arrived = new Promise<void>((r) => {
      allArrived = r;
    });
    // "/early" answers its headers at once and holds the body; "/late" holds its headers too.
    const u = await startUpstream(async (req, res) => {
      const early = req.url === "/early";
      if (early) res.writeHead(200, { "content-type": "text/plain" }).write("first;");
      await new Promise<void>((r) => {
        held.push(r);
        if (held.length === 3) allArrived?.();
      });
      if (!early) res.writeHead(200, { "content-type": "text/plain" });
      res.end("done");
    });
    const { child, url: base, output } = await spawnGateway({});
    // Three keep-alive connections (one undici Client each); requests are pipelined on A and C.
    const [a, b, c] = [
      new Client(base, { pipelining: 2 }),
      new Client(base),
      new Client(base, { pipelining: 2 }),
    ];
    try {
      const auth = { authorization: `Bearer ${await token(newTenant())}` };
      const agentFor = async (path: string) => {
        const res = await b.request({
          method: "POST",
          path: "/v1/agents",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ name: path, upstream_url: `${u.url}${path}` }),
        });
        expect(res.headers.connection).not.toBe("close");
        return ((await res.body.json()) as { id: string }).id;
      };
      const early = await agentFor("/early");
      const late = await agentFor("/late");
      const stream = (client: Client, agent: string) =>
        client.request({ method: "POST", path: `/v1/proxy/${agent}/stream`, headers: auth, body: "x" });

      // In flight on A and C with their headers out; on B with its headers still to come.
      const onA = stream(a, early);
      const onB = stream(b, late);
      const onC = stream(c, early);
      await arrived;
      const [streamA, streamC] = [await onA, await onC];

      child.kill("SIGTERM");
      await eventually(() => (output().includes("shutting down") ? true : undefined));
      // New work on the open connections: a Hono route on A, a direct (hot-path) route on C.
      const laterA = a.request({ method: "GET", path: "/v1/me", headers: auth });
      const laterC = c.request({ method: "GET", path: `/v1/proxy/${early}/stream`, headers: auth });
      // Let both reach the gateway before the calls in flight end.
      await new Promise((r) => setTimeout(r, 200));
      for (const release of held) release();

      for (const res of [streamA, streamC]) expect(await res.body.text()).toBe("first;done");
      const closing = await onB;
      expect(closing.statusCode).toBe(200);
      expect(closing.headers.connection).toBe("close");
      expect(await closing.body.text()).toBe("done");
      for (const later of [await laterA, await laterC]) {
        expect(later.statusCode).toBe(503);
        expect(later.headers.connection).toBe("close");
        expect(await later.body.json()).toEqual({ error: "server is shutting down; retry the request" });
      }
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect(output()).toContain("shutdown complete");
    } finally {
      child.kill("SIGKILL");
      await Promise.all([a, b, c].map((x) => x.close().catch(() => {})));
      await u.close();
    }
  });
});
