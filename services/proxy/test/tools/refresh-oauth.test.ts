// @stores once: refresh's token requests and redirects.
import { randomBytes } from "node:crypto";
import { startUpstream, type TestApp } from "@gw/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import { type AuthServer, startAuthServer } from "../oauth-server.ts";
import { closeAll, closers, mcpAgent, statuses, tool, toolsUpstream } from "./support.ts";

// POST /v1/agents/{id}/tools/refresh opens the agent's credential and dials as step 9 does
// (docs/tools.md, Refresh): OAuth credentials included, against a real authorization server
// (oauth2-mock-server) whose tokens the MCP server (the official SDK) verifies with its JWKS.

let gw: TestApp;
let as: AuthServer;

beforeAll(async () => {
  [gw, as] = await Promise.all([startGateway(), startAuthServer()]);
});
afterEach(closeAll);
afterAll(async () => {
  await gw?.close();
  await as?.close();
});

/** A protected SDK server: a request without a token this authorization server signed gets 401. */
function protectedServer(names: string[]) {
  const payloads: Array<Record<string, unknown>> = [];
  return toolsUpstream({
    tools: names.map((n) => tool(n)),
    authorize: async (auth) => {
      const payload = auth?.startsWith("Bearer ") ? await as.verify(auth.slice(7)) : null;
      if (payload) payloads.push(payload as Record<string, unknown>);
      return payload !== null;
    },
  }).then((up) => Object.assign(up, { payloads }));
}

async function oauthCredential(
  call: Caller,
  kind: "oauth2_client_credentials" | "oauth2_token_exchange",
  opts: { secret?: string } = {},
) {
  const clientId = `client-${randomBytes(4).toString("hex")}`;
  const secret = `client-SECRET-${randomBytes(16).toString("hex")}`;
  as.clients.set(clientId, { secret });
  const res = await call("POST", "/v1/credentials", {
    name: "oauth",
    kind,
    token_url: kind === "oauth2_token_exchange" ? as.exchangeUrl : as.tokenUrl,
    client_id: clientId,
    secret: opts.secret ?? secret,
    scope: "tools:read",
    audience: "https://upstream.example",
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.json.id as string, clientId, secret };
}

const subOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString()).sub as string;

describe("refresh with OAuth credentials", () => {
  it("oauth2_client_credentials: fetches a token from the authorization server and lists a protected SDK server", async () => {
    const call = await caller(gw);
    const up = await protectedServer(["a", "b"]);
    const cred = await oauthCredential(call, "oauth2_client_credentials");
    const agentId = await mcpAgent(call, up.url, { credential_ref: cred.id });
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.complete).toBe(true);
    expect(statuses(res)).toEqual({ a: "unpinned", b: "unpinned" });
    // Every request of the session carried a token the server accepted, fetched for this client.
    expect(up.requests.map((r) => r.rpcMethod ?? r.httpMethod)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "DELETE",
    ]);
    expect(up.payloads).toHaveLength(4);
    expect(up.payloads.every((p) => p.client_id === cred.clientId)).toBe(true);
    const fetched = as.requests.filter((r) => r.clientId === cred.clientId);
    expect(fetched.map((r) => r.grant)).toEqual(["client_credentials"]);
    expect(res.text).not.toContain(cred.secret);
    for (const token of as.issued) expect(res.text).not.toContain(token);

    // A second refresh uses the process's cached token: no new token request.
    expect((await call("POST", `/v1/agents/${agentId}/tools/refresh`)).status).toBe(200);
    expect(as.requests.filter((r) => r.clientId === cred.clientId)).toHaveLength(1);
  });

  it("oauth2_token_exchange: exchanges the refreshing caller's own token, as if they had called", async () => {
    const call = await caller(gw);
    const up = await protectedServer(["x"]);
    const cred = await oauthCredential(call, "oauth2_token_exchange");
    const agentId = await mcpAgent(call, up.url, { credential_ref: cred.id });
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status, res.text).toBe(200);
    expect(statuses(res)).toEqual({ x: "unpinned" });
    const exchange = as.requests.filter((r) => r.clientId === cred.clientId);
    expect(exchange.map((r) => r.path)).toEqual(["/exchange"]);
    expect(exchange[0]?.form.subject_token).toBe(call.token);
    // The server saw the exchanged token: the caller as subject, the credential's client as actor.
    expect(up.payloads[0]).toMatchObject({ sub: subOf(call.token), act: { sub: cred.clientId } });
    expect(up.requests.every((r) => !r.authorization?.includes(call.token))).toBe(true);
  });

  it("answers 502 naming the cause when the token endpoint refuses the client, and never reaches the server", async () => {
    const call = await caller(gw);
    const up = await protectedServer(["a"]);
    const cred = await oauthCredential(call, "oauth2_client_credentials", {
      secret: "not-the-secret-at-all",
    });
    const agentId = await mcpAgent(call, up.url, { credential_ref: cred.id });
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: "the agent's OAuth credential could not obtain an access token" });
    expect(up.requests).toHaveLength(0);
    expect((await call("GET", `/v1/agents/${agentId}/tools`)).json).toEqual({ data: [], refreshed_at: null });
  });
});

describe("refresh: redirects", () => {
  it("does not follow a redirect: 502, and the credential never reaches the redirect's target", async () => {
    const call = await caller(gw);
    const target = await toolsUpstream({ tools: [tool("a")] });
    const redirecting = await startUpstream((_req, res) => {
      res.writeHead(307, { location: target.url }).end();
    });
    closers.push(redirecting.close);
    const cred = await call("POST", "/v1/credentials", {
      name: "b",
      kind: "bearer",
      secret: "redirect-s3cret",
    });
    for (const extra of [{}, { mcp_protocol_version: "2026-07-28" }]) {
      const agentId = await mcpAgent(call, `${redirecting.url}/mcp`, {
        credential_ref: cred.json.id,
        ...extra,
      });
      const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
      expect(res.status).toBe(502);
      expect(res.json).toEqual({ error: "the upstream did not answer tools/list as an MCP server" });
    }
    expect(redirecting.received.length).toBe(2);
    expect(target.requests).toHaveLength(0);
  });
});
