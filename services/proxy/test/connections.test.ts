// @stores once: per-user grants through the all-in-one gateway; the split deployment has its own file.
import { randomBytes } from "node:crypto";
import {
  type Caller,
  freePort,
  newTenant,
  type PerUserMcpServer,
  pollDone,
  startMcpV2Server,
  startPerUserMcpServer,
  startUpstream,
  type TestApp,
  type Upstream,
} from "@gw/testkit";
import { type Recorded, recordingCaller, sweepSecrets } from "@gw/testkit/sweep";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handoffCode, type Provider, startProvider } from "./connections/provider.ts";
import { startGateway } from "./helpers.ts";

// Per-user upstream authorization (docs/connections.md) through the real all-in-one gateway: a
// real authorization server from npm (authorization code + PKCE, rotating refresh tokens,
// revocation), MCP servers of both official SDK generations that accept only its tokens and say
// whose token they got, the official SDK clients of both generations, and an http upstream.

const REVISION = "2026-07-28";
let gw: TestApp;
let provider: Provider;
let v1: PerUserMcpServer;
let v2: PerUserMcpServer;
/** An SDK 1.x member with sessions, each owned by the person whose token opened it. */
let v1s: PerUserMcpServer;
let plain: Upstream;
const seen: Recorded[] = [];
const secrets: string[] = [];

beforeAll(async () => {
  // The provider sends the browser back to GW_PUBLIC_URL: the port is chosen up front.
  const port = await freePort();
  [gw, provider] = await Promise.all([
    startGateway({ GW_LOG_LEVEL: "trace", PORT: String(port), GW_PUBLIC_URL: `http://127.0.0.1:${port}` }),
    startProvider(),
  ]);
  const verify = async (t: string) => {
    const p = await provider.verify(t);
    return p && typeof p.sub === "string" ? { sub: p.sub } : null;
  };
  [v1, v2, v1s] = await Promise.all([
    startPerUserMcpServer("v1", verify),
    startPerUserMcpServer("v2", verify),
    startPerUserMcpServer("v1", verify, { sessions: true }),
  ]);
  plain = await startUpstream(async (req, res) => {
    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "");
    const who = auth?.[1] ? await verify(auth[1]) : null;
    res.writeHead(who ? 200 : 401, { "content-type": "application/json" });
    res.end(JSON.stringify({ sub: who?.sub ?? null }));
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([provider?.close(), v1?.close(), v2?.close(), v1s?.close(), plain?.close()]);
});

const publicUrl = () => gw.rt.config.publicUrl;
const connectUrl = (credId: string) => `${publicUrl()}/console/#/connections/${credId}`;

/** A fresh tenant with a per-user credential at the provider and three agents using it. */
async function setup(opts: { expiresIn?: number } = {}) {
  const tenant = newTenant();
  const admin = await recordingCaller(gw, seen, { tenant, sub: "admin", scopes: ["audit:read"] });
  const clientId = `tracker-${randomBytes(4).toString("hex")}`;
  const secret = `conn-SECRET-${randomBytes(16).toString("hex")}`;
  secrets.push(secret, admin.token);
  provider.clients.set(clientId, { secret, ...(opts.expiresIn ? { expiresIn: opts.expiresIn } : {}) });
  const cred = await admin("POST", "/v1/credentials", {
    name: "tracker",
    kind: "oauth2_authorization_code",
    client_id: clientId,
    secret,
    issuer: provider.url,
    revocation_url: provider.revokeUrl,
    scopes: ["issues:read", "issues:write"],
    resource: "https://tracker.example/mcp",
  });
  expect(cred.status, cred.text).toBe(201);
  const credId = cred.json.id as string;
  const agent = async (body: Record<string, unknown>) => {
    const res = await admin("POST", "/v1/agents", { name: "a", credential_ref: credId, ...body });
    expect(res.status, res.text).toBe(201);
    return res.json.id as string;
  };
  const mcp = { protocol: "mcp", mcp_transport: "streamable_http" };
  return {
    tenant,
    admin,
    clientId,
    credId,
    cred,
    older: await agent({ upstream_url: v1.url, ...mcp }),
    modern: await agent({ upstream_url: v2.url, ...mcp }),
    http: await agent({ upstream_url: plain.url }),
    person: async (sub: string) => {
      const c = await recordingCaller(gw, seen, { tenant, sub });
      secrets.push(c.token);
      return c;
    },
  };
}
type Setup = Awaited<ReturnType<typeof setup>>;

/**
 * The person connects in their browser: POST /v1/connections, consent at the provider, back
 * through the callback to the console, which completes the connect with the person's own token.
 */
async function connect(s: Setup, who: Caller, sub: string) {
  const started = await who("POST", "/v1/connections", { credential_id: s.credId });
  expect(started.status, started.text).toBe(201);
  const back = await provider.consent(started.json.authorize_url, sub);
  expect(back.status).toBe(303);
  expect(back.location).toMatch(new RegExp(`^${publicUrl()}/console/#/connections\\?complete=`));
  const done = await who("POST", "/v1/connections/complete", { code: handoffCode(back.location) });
  expect(done.status, done.text).toBe(201);
  expect(done.json).toMatchObject({
    credential_id: s.credId,
    credential_name: "tracker",
    status: "connected",
  });
  return started;
}

async function streamHttp(s: Setup, who: Caller) {
  return who("POST", `/v1/proxy/${s.http}/stream`, { q: 1 });
}

describe("per-user credential", () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup();
  });

  it("shows the discovered endpoints and the redirect URI to register, never the secret", async () => {
    expect(s.cred.json).toMatchObject({
      kind: "oauth2_authorization_code",
      authorization_url: `${provider.url}/authorize`,
      token_url: `${provider.url}/token`,
      revocation_url: provider.revokeUrl,
      issuer: provider.url,
      scopes: ["issues:read", "issues:write"],
      resource: "https://tracker.example/mcp",
      redirect_uri: `${publicUrl()}/v1/connections/callback`,
      scope: null,
    });
    const read = await s.admin("GET", `/v1/credentials/${s.credId}`);
    expect(read.json.redirect_uri).toBe(`${publicUrl()}/v1/connections/callback`);
  });

  it("refuses endpoints outside the SSRF rules and incomplete settings at write", async () => {
    const base = { name: "x", kind: "oauth2_authorization_code", client_id: "c", secret: "s3cr3t-value" };
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ authorization_url: "https://idp.example/a", token_url: "http://10.0.0.1/token" }, "token_url"],
      [{ authorization_url: "ftp://idp.example/a", token_url: `${provider.url}/token` }, "authorization_url"],
      [
        {
          authorization_url: "https://idp.example/a",
          token_url: `${provider.url}/token`,
          revocation_url: "http://169.254.169.254/r",
        },
        "revocation_url",
      ],
      [{ token_url: `${provider.url}/token` }, "authorization_url"],
      [{ issuer: "http://127.0.0.1:1" }, "issuer"],
      [{ issuer: "http://10.1.2.3" }, "issuer"],
      [{ issuer: provider.url, scope: "a b" }, "scope"],
      [{ issuer: provider.url, client_id: undefined, auth_method: "client_secret_post" }, "client_id"],
    ];
    for (const [extra, field] of bad) {
      const res = await s.admin("POST", "/v1/credentials", { ...base, ...extra });
      expect(res.status, `${JSON.stringify(extra)}: ${res.text}`).toBe(400);
      expect(res.json.error).toContain(field);
    }
    // A public client (no secret) is fine; a confidential auth method without one is not.
    const pub = await s.admin("POST", "/v1/credentials", {
      name: "public",
      kind: "oauth2_authorization_code",
      client_id: "pub",
      issuer: provider.url,
    });
    expect(pub.status, pub.text).toBe(201);
    expect(pub.json).toMatchObject({ auth_method: "none", hint: "" });
    const noSecret = await s.admin("POST", "/v1/credentials", {
      name: "conf",
      kind: "oauth2_authorization_code",
      client_id: "c",
      issuer: provider.url,
      auth_method: "client_secret_basic",
    });
    expect(noSecret.status).toBe(400);
    const bearer = await s.admin("POST", "/v1/credentials", { name: "b", kind: "bearer" });
    expect(bearer.status).toBe(400);
    expect(bearer.json.error).toBe("secret is required");
  });

  it("connects with PKCE S256, the resource indicator and a state that serves once", async () => {
    const alice = await s.person("alice");
    const started = await connect(s, alice, "alice");
    const sent = new URL(started.json.authorize_url);
    expect(sent.searchParams.get("code_challenge_method")).toBe("S256");
    expect(sent.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sent.searchParams.get("resource")).toBe("https://tracker.example/mcp");
    expect(sent.searchParams.get("scope")).toBe("issues:read issues:write");
    expect(sent.searchParams.get("redirect_uri")).toBe(`${publicUrl()}/v1/connections/callback`);
    expect(Date.parse(started.json.expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    const exchange = provider.tokenForms.findLast((f) => f.grant_type === "authorization_code");
    expect(exchange?.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(exchange?.resource).toBe("https://tracker.example/mcp");
    const mine = await alice("GET", "/v1/connections");
    expect(mine.json.data).toEqual([
      {
        credential_id: s.credId,
        credential_name: "tracker",
        status: "connected",
        scopes: expect.any(Array),
        connected_at: expect.any(String),
        last_used_at: null,
      },
    ]);
    const through = await streamHttp(s, alice);
    expect(through.status, through.text).toBe(200);
    expect(through.json).toEqual({ sub: "alice" });
    const audit = await s.admin("GET", "/v1/audit?action=connection.create");
    expect(audit.json.data[0]).toMatchObject({ actor: "alice", resource_id: s.credId });
  });

  it("answers an SDK 1.x client -32042 with a URL elicitation, then serves it the person's own token", async () => {
    const bob = await s.person("bob");
    const endpoint = new URL(`${gw.url}/v1/proxy/${s.older}/stream`);
    const auth = { requestInit: { headers: { Authorization: `Bearer ${bob.token}` } } };
    const early = new ClientV1({ name: "sdk1", version: "1.0.0" });
    const refused = await early.connect(new TransportV1(endpoint, auth)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(McpError);
    const err = refused as McpError;
    expect(err.code).toBe(-32042);
    const [elicitation] = (err.data as { elicitations: Array<Record<string, string>> }).elicitations;
    expect(elicitation).toMatchObject({
      mode: "url",
      url: connectUrl(s.credId),
      elicitationId: expect.any(String),
    });
    expect(v1.seen).not.toContain("bob");
    await connect(s, bob, "bob");
    const client = new ClientV1({ name: "sdk1", version: "1.0.0" });
    await client.connect(new TransportV1(endpoint, auth));
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "token of bob" }]);
    await client.close();
  });

  it("answers an SDK v2 client of 2026-07-28 input_required, and its retry once connected", async () => {
    const carol = await s.person("carol");
    const endpoint = new URL(`${gw.url}/v1/proxy/${s.modern}/stream`);
    const client = new ClientV2(
      { name: "sdk2", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: REVISION } }, capabilities: { elicitation: { url: {} } } },
    );
    const asked: Array<Record<string, unknown>> = [];
    client.setRequestHandler("elicitation/create", async (req) => {
      asked.push(req.params as Record<string, unknown>);
      // The person opens the URL, signs in to the console and connects there.
      await connect(s, carol, "carol");
      return { action: "accept" };
    });
    // server/discover needs the upstream too: it is answered input_required like any request
    // (below); the client adopts what the server would have said.
    const discover = await carol(
      "POST",
      `/v1/proxy/${s.modern}/stream`,
      discoverRequest(),
      modernHeaders("server/discover"),
    );
    expect(discover.json.result).toMatchObject({ resultType: "input_required" });
    await client.connect(
      new TransportV2(endpoint, { requestInit: { headers: { Authorization: `Bearer ${carol.token}` } } }),
      { prior: { kind: "modern", discover: await upstreamDiscover() } },
    );
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "token of carol" }]);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: "url", url: connectUrl(s.credId) });
    await client.close();
  });

  it("answers http agents 403 with connect_url on both paths, before a 202 and with no invocation", async () => {
    const dave = await s.person("dave");
    const streamed = await streamHttp(s, dave);
    expect(streamed.status).toBe(403);
    expect(streamed.json).toEqual({ error: "connection required", connect_url: connectUrl(s.credId) });
    const queued = await dave("POST", `/v1/proxy/${s.http}`, { q: 1 });
    expect(queued.status).toBe(403);
    expect(queued.json).toEqual({ error: "connection required", connect_url: connectUrl(s.credId) });
    const invs = await s.admin("GET", `/v1/invocations?agent_id=${s.http}`);
    expect(invs.json.data.filter((i: { status: string }) => i.status !== "succeeded")).toEqual([]);
  });

  it("serves a connected person's transactional call through the worker with their token", async () => {
    const alice = await s.person("alice");
    const queued = await alice("POST", `/v1/proxy/${s.http}`, { q: 2 });
    expect(queued.status, queued.text).toBe(202);
    const done = await pollDone(alice, s.http, queued.json.invocation_id);
    const body = Buffer.from(done.json.response.body_b64, "base64").toString();
    expect(JSON.parse(body)).toEqual({ sub: "alice" });
  });

  it("stores nothing for a replayed, forged, expired, refused or foreign state", async () => {
    const erin = await s.person("erin");
    const started = await erin("POST", "/v1/connections", { credential_id: s.credId });
    const ok = await provider.consent(started.json.authorize_url, "erin");
    expect(ok.location).toContain("?complete=");
    const failures: string[] = [];
    // Replayed: the callback the provider already sent, again.
    failures.push((await fetchCallback(ok.callback)).location);
    // Forged: a state the gateway never issued.
    const forged = await erin("POST", "/v1/connections", { credential_id: s.credId });
    failures.push(
      (
        await provider.consent(forged.json.authorize_url, "erin", (u) => {
          u.searchParams.set("state", randomBytes(32).toString("base64url"));
          return u;
        })
      ).location,
    );
    // Expired: ten minutes passed (the store's clock moved for this person's pending connects).
    const late = await erin("POST", "/v1/connections", { credential_id: s.credId });
    await gw.rt.store.query(
      "update connection_states set expires_at = now() - interval '1 second' where tenant_id = $1 and sub = $2",
      [s.tenant, "erin"],
    );
    failures.push((await provider.consent(late.json.authorize_url, "erin")).location);
    // Refused by the person at the provider.
    const denied = await erin("POST", "/v1/connections", { credential_id: s.credId });
    const deniedBack = await provider.consent(denied.json.authorize_url, "erin", (u) => {
      u.searchParams.delete("code");
      u.searchParams.set("error", "access_denied");
      return u;
    });
    expect(deniedBack.location).toBe(`${publicUrl()}/console/#/connections?error=denied`);
    for (const location of failures) {
      expect(location).toBe(`${publicUrl()}/console/#/connections?error=invalid_state`);
    }
    expect((await erin("GET", "/v1/connections")).json.data).toEqual([]);
    const stray = await fetchCallback(new URL(`${publicUrl()}/v1/connections/callback?code=x`));
    expect(stray.location).toContain("?error=invalid_state");
  });

  it("stores nothing when the callback is completed in a browser that did not start the connect", async () => {
    // Mallory starts a connect and gets Gina's browser to follow it: Gina signs in at the provider
    // (her account there), the provider sends her browser through the gateway's callback to the
    // console, and her signed-in console completes it with her own token. Stored for nobody.
    const mallory = await s.person("mallory");
    const gina = await s.person("gina");
    const revokedBefore = provider.revoked.length;
    const lure = await mallory("POST", "/v1/connections", { credential_id: s.credId });
    const ginaBrowser = await provider.consent(lure.json.authorize_url, "gina");
    expect(ginaBrowser.status).toBe(303);
    // The callback alone stores nothing, for anyone.
    expect((await mallory("GET", "/v1/connections")).json.data).toEqual([]);
    const code = handoffCode(ginaBrowser.location);
    const crossed = await gina("POST", "/v1/connections/complete", { code });
    expect(crossed.status).toBe(404);
    expect(crossed.json).toEqual({
      error: "connect code (it was already used, expired, or started by another user) not found",
    });
    // Spent: the one who started it cannot complete it afterwards either.
    expect((await mallory("POST", "/v1/connections/complete", { code })).status).toBe(404);
    expect((await mallory("GET", "/v1/connections")).json.data).toEqual([]);
    expect((await gina("GET", "/v1/connections")).json.data).toEqual([]);
    expect((await streamHttp(s, mallory)).status).toBe(403);
    // The tokens issued for Gina's account were revoked at the provider (refresh and access).
    expect(provider.revoked.length).toBe(revokedBefore + 2);

    // The other way round: Gina's own connect, its code completed by Mallory, another tenant's
    // person with the same sub, and no one: the code serves its owner only, once.
    const own = await gina("POST", "/v1/connections", { credential_id: s.credId });
    const back = handoffCode((await provider.consent(own.json.authorize_url, "gina")).location);
    expect((await mallory("POST", "/v1/connections/complete", { code: back })).status).toBe(404);
    const own2 = await gina("POST", "/v1/connections", { credential_id: s.credId });
    const back2 = handoffCode((await provider.consent(own2.json.authorize_url, "gina")).location);
    const elsewhere = await recordingCaller(gw, seen, { sub: "gina" });
    expect((await elsewhere("POST", "/v1/connections/complete", { code: back2 })).status).toBe(404);
    const own3 = await gina("POST", "/v1/connections", { credential_id: s.credId });
    const back3 = handoffCode((await provider.consent(own3.json.authorize_url, "gina")).location);
    const anonymous = await fetch(`${publicUrl()}/v1/connections/complete`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: back3 }),
    });
    expect(anonymous.status).toBe(401);
    expect((await gina("GET", "/v1/connections")).json.data).toEqual([]);
    // Expired: five minutes passed.
    await gw.rt.store.query(
      "update connection_handoffs set expires_at = now() - interval '1 second' where tenant_id = $1 and sub = $2",
      [s.tenant, "gina"],
    );
    expect((await gina("POST", "/v1/connections/complete", { code: back3 })).status).toBe(404);
    expect((await gina("GET", "/v1/connections")).json.data).toEqual([]);
    // Bad bodies.
    for (const body of [
      {},
      { code: 1 },
      { code: "" },
      { code: "x".repeat(129) },
      { code: back3, extra: 1 },
    ]) {
      const bad = await gina("POST", "/v1/connections/complete", body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(typeof bad.json.error).toBe("string");
    }
    // Her own code in her own session: connected.
    await connect(s, gina, "gina");
    expect((await streamHttp(s, gina)).json).toEqual({ sub: "gina" });
    const audit = await s.admin("GET", "/v1/audit?action=connection.create");
    const actors = (audit.json.data as Array<{ actor: string }>).map((e) => e.actor);
    expect(actors.filter((a) => a === "gina")).toHaveLength(1);
    expect(actors).not.toContain("mallory");
  });

  it("keeps a connection out of reach of another person and another tenant", async () => {
    const frank = await s.person("frank");
    expect((await frank("GET", "/v1/connections")).json.data).toEqual([]);
    const del = await frank("DELETE", `/v1/connections/${s.credId}`);
    expect(del.status).toBe(404);
    expect(del.json).toEqual({ error: "connection not found" });
    expect((await streamHttp(s, frank)).status).toBe(403);
    const other = await recordingCaller(gw, seen, { sub: "alice" });
    const foreignStart = await other("POST", "/v1/connections", { credential_id: s.credId });
    expect(foreignStart.status).toBe(404);
    expect((await other("DELETE", `/v1/connections/${s.credId}`)).status).toBe(404);
    expect((await other("GET", "/v1/connections")).json.data).toEqual([]);
    const alice = await s.person("alice");
    expect((await alice("GET", "/v1/connections")).json.data).toHaveLength(1);
    const bad = await alice("POST", "/v1/connections", { credential_id: s.credId, extra: 1 });
    expect(bad.status).toBe(400);
    const bearer = await s.admin("POST", "/v1/credentials", {
      name: "static",
      kind: "bearer",
      secret: "static-secret-1",
    });
    const wrongKind = await alice("POST", "/v1/connections", { credential_id: bearer.json.id });
    expect(wrongKind.status).toBe(400);
  });

  it("disconnects: tokens revoked at the provider, the next call needs a connection again", async () => {
    const alice = await s.person("alice");
    const before = provider.revoked.length;
    const del = await alice("DELETE", `/v1/connections/${s.credId}`);
    expect(del.status).toBe(204);
    expect(provider.revoked.length).toBe(before + 2);
    expect((await streamHttp(s, alice)).status).toBe(403);
    expect((await alice("GET", "/v1/connections")).json.data).toEqual([]);
    const audit = await s.admin("GET", "/v1/audit?action=connection.delete");
    expect(audit.json.data[0]).toMatchObject({ actor: "alice", resource_id: s.credId });
  });
});

describe("refresh", () => {
  /** Access tokens of the client live `seconds` from now on (1: the next use refreshes first). */
  const lifetime = (s: Setup, seconds: number) => {
    const c = provider.clients.get(s.clientId);
    if (c) c.expiresIn = seconds;
  };

  it("refreshes an expiring token once, then uses the rotated grant", async () => {
    const s = await setup({ expiresIn: 1 });
    const grace = await s.person("grace");
    await connect(s, grace, "grace");
    lifetime(s, 3600);
    const before = provider.refreshes.length;
    const first = await streamHttp(s, grace);
    expect(first.status, first.text).toBe(200);
    expect(first.json).toEqual({ sub: "grace" });
    expect(provider.refreshes.length).toBe(before + 1);
    expect((await streamHttp(s, grace)).json).toEqual({ sub: "grace" });
    expect(provider.refreshes.length).toBe(before + 1);
    expect((await grace("GET", "/v1/connections")).json.data[0]).toMatchObject({ status: "connected" });
  });

  it("turns a refresh the provider refuses (invalid_grant) into connection required, never a 5xx", async () => {
    const s = await setup({ expiresIn: 1 });
    const henry = await s.person("henry");
    await connect(s, henry, "henry");
    // The person revoked the app at the provider: the refresh token is dead.
    provider.kill("henry");
    const refused = await streamHttp(s, henry);
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({ error: "connection required", connect_url: connectUrl(s.credId) });
    const older = await henry(
      "POST",
      `/v1/proxy/${s.older}/stream`,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "whoami", arguments: {} } },
      { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    );
    expect(older.status).toBe(200);
    expect(older.json).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32042 } });
    expect((await henry("GET", "/v1/connections")).json.data).toEqual([]);
  });
});

describe("virtual server", () => {
  it("lists only members the person can use; a call routed to a per-user member answers connection required", async () => {
    const s = await setup();
    const other = await startMcpV2Server({ name: "other", tools: ["echo"], resources: false, prompts: [] });
    try {
      const plainMember = await s.admin("POST", "/v1/agents", {
        name: "other",
        upstream_url: other.url,
        protocol: "mcp",
        mcp_transport: "streamable_http",
      });
      const portal = await s.admin("POST", "/v1/agents", {
        name: "portal",
        protocol: "mcp",
        members: [
          { agent_id: s.modern, prefix: "me" },
          { agent_id: plainMember.json.id, prefix: "o" },
        ],
      });
      expect(portal.status, portal.text).toBe(201);
      const kim = await s.person("kim");
      const rpc = (method: string, params: Record<string, unknown>, name?: string) =>
        kim("POST", `/v1/proxy/${portal.json.id}/stream`, modernRequest(method, params), {
          ...modernHeaders(method),
          ...(name ? { "mcp-name": name } : {}),
        });
      const names = async () =>
        ((await rpc("tools/list", {})).json.result.tools as Array<{ name: string }>).map((t) => t.name);
      expect(await names()).toEqual(["o__echo"]);
      const routed = await rpc("tools/call", { name: "me__whoami", arguments: {} }, "me__whoami");
      expect(routed.status).toBe(200);
      expect(routed.json.result).toMatchObject({
        resultType: "input_required",
        inputRequests: {
          connect: { method: "elicitation/create", params: { mode: "url", url: connectUrl(s.credId) } },
        },
      });
      const free = await rpc("tools/call", { name: "o__echo", arguments: { text: "hi" } }, "o__echo");
      expect(free.json.result.content).toEqual([{ type: "text", text: "other:echo:hi" }]);
      await connect(s, kim, "kim");
      expect(await names()).toEqual(["me__whoami", "o__echo"]);
      const served = await rpc("tools/call", { name: "me__whoami", arguments: {} }, "me__whoami");
      expect(served.json.result.content).toEqual([{ type: "text", text: "token of kim" }]);
    } finally {
      await other.close();
    }
  });
});

describe("virtual server over an older member with sessions", () => {
  it("opens the member's session per person: one person's session never serves another's call", async () => {
    const s = await setup();
    const mcp = { protocol: "mcp", mcp_transport: "streamable_http" };
    const pinned = async (revision: string) => {
      const res = await s.admin("POST", "/v1/agents", {
        name: `sessions-${revision}`,
        upstream_url: v1s.url,
        credential_ref: s.credId,
        mcp_protocol_version: revision,
        ...mcp,
      });
      expect(res.status, res.text).toBe(201);
      return res.json.id as string;
    };
    const [older, newest] = [await pinned("2025-06-18"), await pinned("2025-11-25")];
    const portal = await s.admin("POST", "/v1/agents", {
      name: "portal",
      protocol: "mcp",
      members: [
        { agent_id: older, prefix: "a" },
        { agent_id: newest, prefix: "b" },
      ],
    });
    expect(portal.status, portal.text).toBe(201);
    const people = ["nina", "omar"] as const;
    const callers = new Map<string, Caller>();
    for (const sub of people) {
      const who = await s.person(sub);
      callers.set(sub, who);
      await connect(s, who, sub);
    }
    const whoami = async (sub: string, tool: string) => {
      const res = await callers.get(sub)?.(
        "POST",
        `/v1/proxy/${portal.json.id}/stream`,
        modernRequest("tools/call", { name: tool, arguments: {} }),
        { ...modernHeaders("tools/call"), "mcp-name": tool },
      );
      expect(res?.status, res?.text).toBe(200);
      return res?.json.result.content;
    };
    // Interleaved, on both members, each person twice: always their own token on their own session.
    for (const round of [1, 2]) {
      for (const sub of people) {
        for (const tool of ["a__whoami", "b__whoami"]) {
          expect(await whoami(sub, tool), `${sub} ${tool} round ${round}`).toEqual([
            { type: "text", text: `token of ${sub}, session of ${sub}` },
          ]);
        }
      }
    }
    // Concurrent first calls of two more people share nobody's session either.
    const late = ["pia", "quin"] as const;
    for (const sub of late) {
      const who = await s.person(sub);
      callers.set(sub, who);
      await connect(s, who, sub);
    }
    const answers = await Promise.all(late.map((sub) => whoami(sub, "a__whoami")));
    expect(answers).toEqual(
      late.map((sub) => [{ type: "text", text: `token of ${sub}, session of ${sub}` }]),
    );
    expect(v1s.crossed()).toBe(0);
    // One session per person and member, opened once (the pool still serves each person's calls).
    expect([...v1s.sessions].sort()).toEqual(["nina", "nina", "omar", "omar", "pia", "quin"]);
    // An older client (SDK 1.x) through the virtual server: its own session too.
    const transport = new TransportV1(new URL(`${gw.url}/v1/proxy/${portal.json.id}/stream`), {
      requestInit: { headers: { Authorization: `Bearer ${callers.get("nina")?.token}` } },
    });
    const older1 = new ClientV1({ name: "t", version: "1" });
    await older1.connect(transport);
    try {
      const got = await older1.callTool({ name: "a__whoami", arguments: {} });
      expect(got.content).toEqual([{ type: "text", text: "token of nina, session of nina" }]);
    } finally {
      await older1.close();
    }
    expect(v1s.crossed()).toBe(0);
  });
});

describe("secrets", () => {
  it("no token or client secret in any answer, log line or table", async () => {
    expect(provider.issued.length).toBeGreaterThan(5);
    const tokens = provider.issued.filter((t): t is string => typeof t === "string" && t.length > 0);
    await sweepSecrets(gw, seen, [...secrets, ...tokens]);
  });
});

function modernHeaders(method: string): Record<string, string> {
  return {
    "mcp-protocol-version": REVISION,
    "mcp-method": method,
    accept: "application/json, text/event-stream",
  };
}

function modernRequest(method: string, params: Record<string, unknown>) {
  return {
    jsonrpc: "2.0",
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  };
}

function discoverRequest() {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "server/discover",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  };
}

/** What the upstream itself answers server/discover (with a token of its provider). */
async function upstreamDiscover() {
  const token = await provider.server.issuer.buildToken({
    scopesOrTransform: (_h, p) => {
      p.sub = "probe";
    },
  });
  const res = await fetch(v2.url, {
    method: "POST",
    headers: {
      ...modernHeaders("server/discover"),
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
    },
    body: JSON.stringify(discoverRequest()),
  });
  const json = (await res.json()) as { result: Record<string, unknown> };
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's DiscoverResult, as the server sent it.
  return json.result as any;
}

async function fetchCallback(url: URL) {
  const res = await fetch(url, { redirect: "manual" });
  await res.arrayBuffer();
  return { status: res.status, location: res.headers.get("location") ?? "" };
}
