// @stores both: writes reach the data plane through the store's notifications.
import { createControlPlaneApp } from "@gw/control-plane";
import { createProxyApp } from "@gw/proxy";
import {
  client,
  eventually,
  newTenant,
  serveApp,
  startUpstream,
  TEST_DATABASE_URL,
  type TestApp,
  token,
  type Upstream,
} from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "./helpers.ts";

// A write is effective on the next call of the process that took it, and on every other replica
// within 1 s (docs/architecture.md, "Writes take effect on the next call"). The agent and policy
// caches' time-to-live is set to a minute throughout, so only the invalidation can explain a write
// taking effect.
const LONG_CACHE = { GW_AGENT_CACHE_MS: "60000", GW_POLICY_CACHE_MS: "60000" };

let upstream: Upstream;
const apps: TestApp[] = [];

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(String(req.headers.authorization ?? "none"));
  });
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await upstream?.close();
});

async function tenantOn(cpUrl: string) {
  const bearer = await token(newTenant());
  return { bearer, cp: client(cpUrl, bearer) };
}

const stream = (url: string, bearer: string, agentId: string) =>
  client(url, bearer)("POST", `/v1/proxy/${agentId}/stream`, "x", { "content-type": "text/plain" });

describe("writes take effect on the next call (all-in-one)", () => {
  let gw: TestApp;
  beforeAll(async () => {
    gw = await startGateway(LONG_CACHE);
    apps.push(gw);
  });

  it("suspend, resume and delete apply to the very next call", async () => {
    const { bearer, cp } = await tenantOn(gw.url);
    const created = await cp("POST", "/v1/agents", { name: "a", upstream_url: upstream.url });
    const id = created.json.id as string;
    expect((await stream(gw.url, bearer, id)).status).toBe(200); // now cached

    expect((await cp("PATCH", `/v1/agents/${id}`, { suspended: true })).status).toBe(200);
    const suspended = await stream(gw.url, bearer, id);
    expect(suspended.status).toBe(422);
    expect(suspended.json).toEqual({ error: "agent is suspended" });
    // The transactional path too, and nothing was recorded for the refused calls.
    const transact = await client(gw.url, bearer)("POST", `/v1/proxy/${id}`, "x");
    expect(transact.status).toBe(422);

    expect((await cp("PATCH", `/v1/agents/${id}`, { suspended: false })).status).toBe(200);
    expect((await stream(gw.url, bearer, id)).status).toBe(200);

    expect((await cp("DELETE", `/v1/agents/${id}`)).status).toBe(204);
    expect((await stream(gw.url, bearer, id)).status).toBe(404);
  });

  it("a changed upstream_url and a rotated credential apply to the very next call", async () => {
    const { bearer, cp } = await tenantOn(gw.url);
    const other = await startUpstream((_req, res) => res.writeHead(200).end("other"));
    apps.push({ close: other.close } as TestApp);
    const cred = await cp("POST", "/v1/credentials", {
      name: "c",
      kind: "bearer",
      secret: "first-secret-0001",
    });
    const created = await cp("POST", "/v1/agents", {
      name: "a",
      upstream_url: upstream.url,
      credential_ref: cred.json.id,
    });
    const id = created.json.id as string;
    expect((await stream(gw.url, bearer, id)).text).toBe("Bearer first-secret-0001");

    const rotated = await cp("PUT", `/v1/credentials/${cred.json.id}`, {
      name: "c",
      kind: "bearer",
      secret: "second-secret-0002",
    });
    expect(rotated.status).toBe(200);
    expect((await stream(gw.url, bearer, id)).text).toBe("Bearer second-secret-0002");

    expect(
      (await cp("PATCH", `/v1/agents/${id}`, { upstream_url: other.url, credential_ref: null })).status,
    ).toBe(200);
    expect((await stream(gw.url, bearer, id)).text).toBe("other");
  });
});

describe.skipIf(!TEST_DATABASE_URL)("writes reach other replicas (split deployment, shared Postgres)", () => {
  let cpApp: TestApp;
  let proxyA: TestApp;
  let proxyB: TestApp;
  const startProxy = () =>
    serveApp(
      (rt) => {
        const proxy = createProxyApp(rt);
        return { ...proxy, stop: () => proxy.inflight.drain() };
      },
      LONG_CACHE,
      "proxy",
    );
  beforeAll(async () => {
    [cpApp, proxyA, proxyB] = await Promise.all([
      serveApp(createControlPlaneApp, {}, "control-plane"),
      startProxy(),
      startProxy(),
    ]);
    apps.push(cpApp, proxyA, proxyB);
  });

  it("both proxy replicas refuse a suspended agent within a second, and serve it again once resumed", async () => {
    const { bearer, cp } = await tenantOn(cpApp.url);
    const created = await cp("POST", "/v1/agents", { name: "a", upstream_url: upstream.url });
    const id = created.json.id as string;
    for (const p of [proxyA, proxyB]) expect((await stream(p.url, bearer, id)).status).toBe(200);

    expect((await cp("PATCH", `/v1/agents/${id}`, { suspended: true })).status).toBe(200);
    for (const p of [proxyA, proxyB]) {
      await eventually(
        async () => ((await stream(p.url, bearer, id)).status === 422 ? true : undefined),
        1_000,
      );
    }
    expect((await cp("PATCH", `/v1/agents/${id}`, { suspended: false })).status).toBe(200);
    for (const p of [proxyA, proxyB]) {
      await eventually(
        async () => ((await stream(p.url, bearer, id)).status === 200 ? true : undefined),
        1_000,
      );
    }
  });

  it("both proxy replicas stop applying a deleted policy within a second", async () => {
    const { bearer, cp } = await tenantOn(cpApp.url);
    const created = await cp("POST", "/v1/agents", { name: "a", upstream_url: upstream.url });
    const id = created.json.id as string;
    expect((await cp("PUT", "/v1/policy", { default: "deny" })).status).toBe(200);
    for (const p of [proxyA, proxyB]) {
      await eventually(
        async () => ((await stream(p.url, bearer, id)).status === 403 ? true : undefined),
        1_000,
      );
    }
    expect((await cp("DELETE", "/v1/policy")).status).toBe(204);
    for (const p of [proxyA, proxyB]) {
      await eventually(
        async () => ((await stream(p.url, bearer, id)).status === 200 ? true : undefined),
        1_000,
      );
    }
  });
});

describe("request ids", () => {
  let gw: TestApp;
  beforeAll(async () => {
    gw = await startGateway();
    apps.push(gw);
  });

  /** The access-log lines of one request id. */
  const linesOf = (app: TestApp, requestId: string) =>
    app.logs.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.request_id === requestId && l.msg === "request");

  it("the X-Request-Id a caller sees is the one in the one access-log line, on both planes", async () => {
    const { bearer, cp } = await tenantOn(gw.url);
    const created = await cp("POST", "/v1/agents", { name: "a", upstream_url: upstream.url });
    const listed = await cp("GET", "/v1/agents");
    const streamed = await stream(gw.url, bearer, created.json.id as string);
    const given = await client(gw.url, bearer)("GET", "/v1/me", undefined, { "x-request-id": "caller-id-1" });
    expect(given.headers.get("x-request-id")).toBe("caller-id-1");
    for (const res of [created, listed, streamed, given]) {
      const id = res.headers.get("x-request-id") ?? "";
      expect(id).not.toBe("");
      const lines = await eventually(() => {
        const found = linesOf(gw, id);
        return found.length > 0 ? found : undefined;
      });
      expect(lines).toHaveLength(1);
    }
  });
});
