import type { LookupAddress } from "node:dns";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, buildConnector, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUpstreamDispatcher, guardedLookup, SsrfBlockedError } from "../src/dispatcher.ts";
import { ssrfPolicy } from "../src/ssrf.ts";

// The dial-time guard against a real local server. No DNS server runs here, so names come from a
// resolver the test controls (the same hook dns.lookup fills in production).

let server: Server;
let port: number;
let hits = 0;
beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** A resolver answering `answers[n]` for its n-th call (the last one afterwards). */
function resolverOf(answers: string[][]) {
  let n = 0;
  return ((_host: string, _opts: unknown, cb: (e: null, a: LookupAddress[]) => void) => {
    const list = answers[Math.min(n++, answers.length - 1)] as string[];
    cb(
      null,
      list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
    );
  }) as unknown as typeof import("node:dns").lookup;
}

function guardedAgent(answers: string[][], allow: string[] = []) {
  const connector = buildConnector({
    lookup: guardedLookup(ssrfPolicy(allow), resolverOf(answers)),
  } as buildConnector.BuildOptions);
  // One connection per request, so every request dials (and resolves) afresh.
  return new Agent({ connect: connector, pipelining: 0, keepAliveTimeout: 1 });
}

const errorOf = async (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe("dial-time SSRF guard", () => {
  it("refuses a name that resolves to a blocked address", async () => {
    const before = hits;
    for (const answer of [["127.0.0.1"], ["10.0.0.5"], ["::ffff:127.0.0.1"], ["8.8.8.8", "127.0.0.1"]]) {
      const agent = guardedAgent([answer]);
      const err = await errorOf(request(`http://upstream.test:${port}/`, { dispatcher: agent }));
      expect(err).toBeInstanceOf(Error);
      expect(String((err as { cause?: unknown }).cause ?? err)).toMatch(/not allowed/);
      await agent.close();
    }
    expect(hits).toBe(before);
  });

  it("checks the address it dials on every connection: a name that rebinds is refused", async () => {
    // One resolver for the name: first an exempted address (the test server), then the metadata one.
    const resolve = resolverOf([["127.0.0.1"], ["169.254.169.254"]]);
    const agentOf = () =>
      new Agent({
        connect: buildConnector({
          lookup: guardedLookup(ssrfPolicy(["127.0.0.0/8"]), resolve),
        } as buildConnector.BuildOptions),
      });
    const first = agentOf();
    const ok = await request(`http://rebind.test:${port}/`, { dispatcher: first });
    await ok.body.dump();
    expect(ok.statusCode).toBe(302);
    await first.close();
    const second = agentOf();
    const err = await errorOf(request(`http://rebind.test:${port}/`, { dispatcher: second }));
    expect(String((err as { cause?: unknown }).cause ?? err)).toMatch(/not allowed/);
    await second.close();
  });

  it("refuses literal blocked addresses before connecting, and never follows redirects", async () => {
    const strict = createUpstreamDispatcher({ policy: ssrfPolicy([]), connectTimeoutMs: 2_000 });
    for (const url of [`http://127.0.0.1:${port}/`, `http://[::ffff:7f00:1]:${port}/`]) {
      const err = await errorOf(request(url, { dispatcher: strict }));
      expect(err).toBeInstanceOf(SsrfBlockedError);
    }
    await strict.close();
    const lax = createUpstreamDispatcher({ policy: ssrfPolicy(["127.0.0.0/8"]), connectTimeoutMs: 2_000 });
    const res = await request(`http://127.0.0.1:${port}/`, { dispatcher: lax });
    await res.body.dump();
    // The 302 comes back as it is: the gateway's dispatcher does not follow it.
    expect(res.statusCode).toBe(302);
    await lax.close();
  });
});
