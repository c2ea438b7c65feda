// @stores once: Postgres and Redis only: two proxy replicas of the split deployment share one grant.
import { randomBytes } from "node:crypto";
import { createControlPlaneApp } from "@gw/control-plane";
import { createProxyApp } from "@gw/proxy";
import {
  client,
  freePort,
  newTenant,
  serveApp,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  type TestApp,
  token,
  type Upstream,
} from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handoffCode, type Provider, startProvider, startWhoami } from "./connections/provider.ts";

// Refresh tokens rotate: two refreshes of one grant would revoke it. With one grant whose access
// token has expired, concurrent calls through two proxy replicas (each its own process cache)
// make one refresh between them, and every call is served with the person's token
// (docs/connections.md, Refresh).

const SPLIT = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
const KEY = randomBytes(32).toString("base64");

describe.skipIf(!SPLIT)("per-user grants across two proxy replicas", () => {
  let cp: TestApp;
  let proxies: TestApp[] = [];
  let provider: Provider;
  let upstream: Upstream;

  beforeAll(async () => {
    provider = await startProvider();
    upstream = await startWhoami(provider);
    const port = await freePort();
    const env = { GW_KMS_KEY: KEY, GW_PUBLIC_URL: `http://127.0.0.1:${port}` };
    const proxy = () =>
      serveApp(
        (rt) => {
          const p = createProxyApp(rt);
          return { ...p, stop: () => p.inflight.drain() };
        },
        env,
        "proxy",
      );
    [cp, ...proxies] = await Promise.all([
      serveApp(createControlPlaneApp, { ...env, PORT: String(port) }, "control-plane"),
      proxy(),
      proxy(),
    ]);
  });
  afterAll(async () => {
    for (const app of [...proxies, cp]) await app?.close();
    await provider?.close();
    await upstream?.close();
  });

  it("concurrent calls with an expired token make one refresh, on one replica, and all succeed", async () => {
    const tenant = newTenant();
    const admin = client(cp.url, await token(tenant, "admin"));
    const clientId = `split${randomBytes(4).toString("hex")}`;
    // The token the connect gets lives 1 s: the first use refreshes it.
    provider.clients.set(clientId, {
      secret: `split-SECRET-${randomBytes(16).toString("hex")}`,
      expiresIn: 1,
    });
    const cred = await admin("POST", "/v1/credentials", {
      name: "tracker",
      kind: "oauth2_authorization_code",
      client_id: clientId,
      secret: provider.clients.get(clientId)?.secret,
      issuer: provider.url,
    });
    expect(cred.status, cred.text).toBe(201);
    const agent = await admin("POST", "/v1/agents", {
      name: "a",
      upstream_url: upstream.url,
      credential_ref: cred.json.id,
      // The 24 calls at once are over the default burst (20), which both replicas share in Redis.
      rate_limit: { rps: 1000, burst: 1000 },
    });
    expect(agent.status, agent.text).toBe(201);
    const bearer = await token(tenant, "ivy");
    const ivy = client(cp.url, bearer);
    const started = await ivy("POST", "/v1/connections", { credential_id: cred.json.id });
    const back = await provider.consent(started.json.authorize_url, "ivy");
    const done = await ivy("POST", "/v1/connections/complete", { code: handoffCode(back.location) });
    expect(done.status, done.text).toBe(201);
    // Refreshed tokens live an hour.
    const c = provider.clients.get(clientId);
    if (c) c.expiresIn = 3600;
    const before = provider.refreshes.length;
    const calls = Array.from({ length: 24 }, (_, i) =>
      client(proxies[i % 2]?.url ?? "", bearer)("POST", `/v1/proxy/${agent.json.id}/stream`, { i }),
    );
    const answers = await Promise.all(calls);
    for (const a of answers) {
      expect(a.status, a.text).toBe(200);
      expect(a.json).toEqual({ sub: "ivy" });
    }
    expect(provider.refreshes.length - before).toBe(1);
    expect((await ivy("GET", "/v1/connections")).json.data[0]).toMatchObject({ status: "connected" });
  });
});
