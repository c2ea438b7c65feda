// @stores once: the dial-time SSRF guard.
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import type { TestApp } from "@gw/testkit";
import { type Recorded, recordingCaller, sweepSecrets, Tally } from "@gw/testkit/sweep";
import { isBlockedIp, ssrfPolicy } from "@gw/upstream";
import { afterAll, describe, expect, it } from "vitest";
import { createAgent, pollDone, recordDone, startGateway, upstreamPool } from "./helpers.ts";

// SSRF in the data plane: the dial-time guard and redirects on real sockets, on both proxy paths.
// The write-time corpus (POST and PATCH of agents) is the control plane's:
// services/gateway/test/security/ssrf.test.ts. Every answer, and each deployment's logs and
// tables, are swept for the dev signing secret at the end.

const seen: Recorded[] = [];
const tally = new Tally();
/** Each test's own deployment, swept and closed at the end. */
const gateways: TestApp[] = [];

async function gateway(env: Record<string, string | undefined> = {}): Promise<TestApp> {
  const gw = await startGateway(env);
  gateways.push(gw);
  return gw;
}

afterAll(async () => {
  tally.print("SSRF at dial time (502 ssrf_blocked expected; refused = not followed for redirects)");
  for (const gw of gateways) await sweepSecrets(gw, seen, []);
  for (const gw of gateways) await gw.close();
});

describe("dial time", () => {
  const pool = upstreamPool();
  afterAll(() => pool.closeAll());

  it("refuses a name that resolves to a blocked address, on both proxy paths, without reaching it", async (ctx) => {
    // No DNS server here: the machine's own name resolves through /etc/hosts (127.0.0.1 on these
    // machines, a private address in containers). Either is blocked with no exempted range.
    const name = hostname();
    const answer = await lookup(name).catch(() => undefined);
    if (!answer || !isBlockedIp(answer.address, ssrfPolicy([]))) {
      console.log(`dial-time name case skipped: ${name} resolves to ${answer?.address ?? "nothing"}`);
      ctx.skip();
      return;
    }
    const up = await pool.up((_req, res) => res.end("reached"), {});
    const gw = await gateway({ GW_SSRF_ALLOW_CIDRS: "", GW_ALLOW_HTTP_UPSTREAMS: "true" });
    const c = await recordingCaller(gw, seen);
    const agentId = await createAgent(c, { upstream_url: `http://${name}:${up.port}/` });
    const stream = await c("POST", `/v1/proxy/${agentId}/stream`, { q: 1 });
    tally.add("dial-time: name → blocked address", stream.status === 502);
    expect(stream.status).toBe(502);
    expect(stream.json).toEqual({ error: "upstream address is not allowed" });
    const rec = await recordDone(c, stream.headers.get("x-gateway-invocation-id") as string);
    expect(rec.json.error_class).toBe("ssrf_blocked");

    const accepted = await c("POST", `/v1/proxy/${agentId}`, { q: 2 });
    expect(accepted.status).toBe(202);
    const done = await pollDone(c, agentId, accepted.json.invocation_id);
    tally.add("dial-time: name → blocked address", done.json.error_class === "ssrf_blocked");
    expect(done.json).toMatchObject({ status: "failed", error_class: "ssrf_blocked" });
    expect(up.received).toHaveLength(0);
  });

  it("never follows an upstream redirect, to an allowed address or not", async () => {
    const target = await pool.up((_req, res) => res.end("followed"));
    const gw = await gateway();
    const c = await recordingCaller(gw, seen);
    for (const location of [`${target.url}/inner`, "http://169.254.169.254/latest/meta-data/"]) {
      const up = await pool.up((_req, res) => res.writeHead(302, { location }).end());
      const agentId = await createAgent(c, { upstream_url: `${up.url}/` });
      // The test's own client must not follow it either: fetch with redirect "manual".
      const stream = await fetch(`${gw.url}/v1/proxy/${agentId}/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${c.token}`, "content-type": "application/json" },
        body: "{}",
        redirect: "manual",
      });
      await stream.arrayBuffer();
      expect(stream.status).toBe(302);
      expect(stream.headers.get("location")).toBe(location);
      const accepted = await c("POST", `/v1/proxy/${agentId}`, { q: 2 });
      const done = await pollDone(c, agentId, accepted.json.invocation_id);
      expect(done.json.response?.status).toBe(302);
      tally.add(
        "redirects, streaming + transactional (refused = not followed)",
        target.received.length === 0,
      );
    }
    expect(target.received).toHaveLength(0);
  });
});
