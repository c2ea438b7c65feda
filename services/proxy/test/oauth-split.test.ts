// @stores once: Postgres and Redis only: the split deployment.
import { randomBytes } from "node:crypto";
import { createControlPlaneApp } from "@gw/control-plane";
import { createProxyApp } from "@gw/proxy";
import {
  client,
  newTenant,
  serveApp,
  startUpstream,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  type TestApp,
  token,
  type Upstream,
} from "@gw/testkit";
import { startWorker } from "@gw/worker";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthServer, startAuthServer } from "./oauth-server.ts";

// OAuth credentials in the split deployment: the control plane seals the client secret, the proxy seals the
// caller's token into the stored request, the worker (its own process and token cache) opens both
// and fetches the access token. Needs the shared Postgres and Redis of a real split deployment.

const SPLIT = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
const KEY = randomBytes(32).toString("base64");

describe.skipIf(!SPLIT)("OAuth credentials in the split deployment", () => {
  let cp: TestApp;
  let proxy: TestApp;
  let worker: TestApp;
  let as: AuthServer;
  let upstream: Upstream;
  const seen: Array<Record<string, unknown> | null> = [];
  /** The callers' own bearer tokens, for the leak sweep. */
  const bearers: string[] = [];

  beforeAll(async () => {
    as = await startAuthServer();
    upstream = await startUpstream(async (req, res) => {
      const auth = req.headers.authorization ?? "";
      const payload = auth.startsWith("Bearer ") ? await as.verify(auth.slice(7)) : null;
      seen.push(payload as Record<string, unknown> | null);
      res.writeHead(payload ? 200 : 401, { "content-type": "application/json" });
      res.end(JSON.stringify({ sub: payload?.sub ?? null }));
    });
    const env = { GW_KMS_KEY: KEY, GW_LOG_LEVEL: "trace" };
    const queue = { GW_QUEUE_NAME: `test-${randomBytes(8).toString("hex")}` };
    [cp, proxy, worker] = await Promise.all([
      serveApp(createControlPlaneApp, { ...env, ...queue }, "control-plane"),
      serveApp(
        (rt) => {
          const p = createProxyApp(rt);
          return { ...p, stop: () => p.inflight.drain() };
        },
        { ...env, ...queue },
        "proxy",
      ),
      serveApp(
        (rt) => {
          const w = startWorker(rt);
          return { fetch: () => new Response(null, { status: 404 }), stop: w.stop };
        },
        { ...env, ...queue },
        "worker",
      ),
    ]);
  });
  afterAll(async () => {
    for (const app of [proxy, worker, cp]) await app?.close();
    await as?.close();
    await upstream?.close();
  });

  async function agentWith(kind: string, tokenUrl: string) {
    const tenant = newTenant();
    const bearer = await token(tenant);
    bearers.push(bearer);
    const call = client(cp.url, bearer);
    const clientId = `split-${randomBytes(4).toString("hex")}`;
    const secret = `split-SECRET-${randomBytes(16).toString("hex")}`;
    as.clients.set(clientId, { secret });
    const cred = await call("POST", "/v1/credentials", {
      name: "c",
      kind,
      token_url: tokenUrl,
      client_id: clientId,
      secret,
    });
    expect(cred.status, cred.text).toBe(201);
    const agent = await call("POST", "/v1/agents", {
      name: "a",
      upstream_url: upstream.url,
      credential_ref: cred.json.id,
    });
    expect(agent.status, agent.text).toBe(201);
    return { bearer, agentId: agent.json.id as string };
  }

  async function transact(bearer: string, agentId: string) {
    const poller = client(proxy.url, bearer);
    const res = await request(`${proxy.url}/v1/proxy/${agentId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}` },
      body: "x",
    });
    await res.body.text();
    expect(res.statusCode).toBe(202);
    const id = res.headers["x-gateway-invocation-id"] as string;
    const until = Date.now() + 20_000;
    for (;;) {
      const poll = await poller("GET", `/v1/proxy/${agentId}/invocations/${id}`);
      if (poll.json.status === "succeeded" || poll.json.status === "failed") return poll;
      if (Date.now() > until) throw new Error(`still ${poll.json.status}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it("the worker fetches a client credentials token and the upstream accepts it", async () => {
    const { bearer, agentId } = await agentWith("oauth2_client_credentials", as.tokenUrl);
    const poll = await transact(bearer, agentId);
    expect(poll.json).toMatchObject({ status: "succeeded", upstream_status: 200 });
  });

  it("the worker exchanges the caller's token the proxy sealed for it", async () => {
    const { bearer, agentId } = await agentWith("oauth2_token_exchange", as.exchangeUrl);
    const poll = await transact(bearer, agentId);
    expect(poll.json).toMatchObject({ status: "succeeded", upstream_status: 200 });
    expect(seen.at(-1)).toMatchObject({ sub: "user-1" });
    expect(as.requests.at(-1)?.form.subject_token).toBe(bearer);
  });

  /** A streaming call through the proxy: its status, its body, and the caller's token sent. */
  async function stream(bearer: string, agentId: string) {
    const res = await request(`${proxy.url}/v1/proxy/${agentId}/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}` },
      body: "x",
    });
    return { status: res.statusCode, json: JSON.parse(await res.body.text()) };
  }

  it("streaming: the proxy fetches a client credentials token itself and the upstream accepts it", async () => {
    const { bearer, agentId } = await agentWith("oauth2_client_credentials", as.tokenUrl);
    const before = as.requests.length;
    expect(await stream(bearer, agentId)).toEqual({ status: 200, json: { sub: null } });
    expect(seen.at(-1)).toMatchObject({ client_id: as.requests.at(-1)?.clientId });
    // Cached in the proxy: a second call reuses the token.
    expect(await stream(bearer, agentId)).toEqual({ status: 200, json: { sub: null } });
    expect(as.requests.length - before).toBe(1);
  });

  it("streaming: the proxy exchanges the caller's token and the upstream accepts the result", async () => {
    const { bearer, agentId } = await agentWith("oauth2_token_exchange", as.exchangeUrl);
    expect(await stream(bearer, agentId)).toEqual({ status: 200, json: { sub: "user-1" } });
    expect(as.requests.at(-1)?.form.subject_token).toBe(bearer);
    expect(as.requests.at(-1)?.path).toBe("/exchange");
  });

  it("no secret, caller token or access token in any process's log", () => {
    const logs = [cp, proxy, worker].map((a) => a.logs.text()).join("\n");
    expect(logs).toContain('"msg":"request"');
    const searched = [...as.issued, ...[...as.clients.values()].map((c) => c.secret), ...bearers];
    expect(bearers.length).toBeGreaterThanOrEqual(4);
    expect(as.issued.length).toBeGreaterThanOrEqual(4);
    for (const s of searched) {
      expect(logs.includes(s)).toBe(false);
    }
  });
});
