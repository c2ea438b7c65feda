// @stores once: token requests to the authorization server.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { eventually, type Res, startUpstream, type TestApp, token, type Upstream } from "@gw/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, recordDone, startGateway } from "./helpers.ts";
import { type AuthServer, startAuthServer } from "./oauth-server.ts";

// OAuth upstream credentials through the real all-in-one gateway, against a real
// authorization server (oauth2-mock-server) whose tokens the upstream verifies with its JWKS.

const CREDENTIAL_ERROR = { error: "upstream credential unavailable" };
type Mode = "streaming" | "transactional";
const MODES: Mode[] = ["streaming", "transactional"];

let gw: TestApp;
let as: AuthServer;
/** What the upstream saw: the verified token payload per request (null: not a token of the AS). */
let upstream: Upstream & {
  seen: Array<{ auth: string | undefined; payload: Record<string, unknown> | null }>;
};
const upstreams: Upstream[] = [];
/** Client secrets and caller tokens of the run, and every response, for the leak sweep. */
const secrets: string[] = [];
const responses: string[] = [];
/** Every invocation of the run, whose receipt the leak sweep reads. */
const invocations: Array<{ call: Caller; id: string }> = [];
const RECEIPTS = {
  GW_RECEIPT_SIGNING_KEY: JSON.stringify(generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" })),
  GW_RECEIPT_ACTOR: "urn:gw:test-gateway",
};

beforeAll(async () => {
  [gw, as] = await Promise.all([startGateway({ GW_LOG_LEVEL: "trace", ...RECEIPTS }), startAuthServer()]);
  const seen: Array<{ auth: string | undefined; payload: Record<string, unknown> | null }> = [];
  const u = await startUpstream(async (req, res) => {
    const auth = req.headers.authorization;
    const payload = auth?.startsWith("Bearer ") ? await as.verify(auth.slice(7)) : null;
    seen.push({ auth, payload: payload as Record<string, unknown> | null });
    res.writeHead(payload ? 200 : 401, { "content-type": "application/json" });
    res.end(JSON.stringify(payload ? { sub: payload.sub ?? null } : { error: "bad token" }));
  });
  upstreams.push(u);
  upstream = Object.assign(u, { seen });
});
afterAll(async () => {
  await gw?.close();
  await as?.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

function newSecret(label: string): string {
  const s = `${label}-SECRET-${randomBytes(16).toString("hex")}`;
  secrets.push(s);
  return s;
}

/** A fresh tenant, its AS client, a credential of `kind` for it and an agent using it. */
async function setup(
  kind: "oauth2_client_credentials" | "oauth2_token_exchange",
  more: {
    authMethod?: string;
    expiresIn?: number;
    holdMs?: number;
    tokenUrl?: string;
    secret?: string;
    upstreamUrl?: string;
  } = {},
) {
  const call = await caller(gw, ["invocations:read_body"]);
  secrets.push(call.token);
  const clientId = `client-${randomBytes(4).toString("hex")}`;
  const secret = newSecret("client");
  as.clients.set(clientId, {
    secret,
    ...(more.expiresIn !== undefined ? { expiresIn: more.expiresIn } : {}),
    ...(more.holdMs !== undefined ? { holdMs: more.holdMs } : {}),
  });
  const created = await call("POST", "/v1/credentials", {
    name: "oauth",
    kind,
    token_url: more.tokenUrl ?? (kind === "oauth2_token_exchange" ? as.exchangeUrl : as.tokenUrl),
    client_id: clientId,
    secret: more.secret ?? secret,
    scope: "tools:read",
    audience: "https://upstream.example",
    ...(more.authMethod ? { auth_method: more.authMethod } : {}),
  });
  expect(created.status, created.text).toBe(201);
  responses.push(created.text);
  const credId = created.json.id as string;
  const agentId = await createAgent(call, {
    upstream_url: more.upstreamUrl ?? upstream.url,
    credential_ref: credId,
  });
  return { call, clientId, secret, credId, agentId };
}

type Outcome = { status: number; body: string; invocationId: string; record: Res; poll?: Res };

async function invoke(mode: Mode, call: Caller, agentId: string, bearer = call.token): Promise<Outcome> {
  const path = mode === "streaming" ? `/v1/proxy/${agentId}/stream` : `/v1/proxy/${agentId}`;
  const res = await request(`${gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "text/plain" },
    body: "hello",
  });
  const body = await res.body.text();
  responses.push(body, JSON.stringify(res.headers));
  const invocationId = res.headers["x-gateway-invocation-id"] as string;
  expect(invocationId, body).toMatch(/^inv_/);
  invocations.push({ call, id: invocationId });
  const record = () => recordDone(call, invocationId);
  if (mode === "streaming") {
    const r = await record();
    responses.push(r.text);
    return { status: res.statusCode, body, invocationId, record: r };
  }
  expect(res.statusCode, body).toBe(202);
  const poll = await pollDone(call, agentId, invocationId);
  const r = await record();
  responses.push(poll.text, r.text);
  return { status: res.statusCode, body, invocationId, poll, record: r };
}

/** The upstream's answer in either mode: the streamed body, or the polled result's. */
function answerOf(out: Outcome): { status: number; json: Record<string, unknown> } {
  if (!out.poll) return { status: out.status, json: JSON.parse(out.body) };
  const resp = out.poll.json.response as { status: number; body_b64: string };
  return { status: resp.status, json: JSON.parse(Buffer.from(resp.body_b64, "base64").toString()) };
}

function expectCredentialError(mode: Mode, out: Outcome) {
  if (mode === "streaming") {
    expect(out.status).toBe(502);
    expect(JSON.parse(out.body)).toEqual(CREDENTIAL_ERROR);
  } else {
    expect(out.poll?.json).toMatchObject({ status: "failed", error_class: "credential_error" });
    expect(out.poll?.json.response).toBeUndefined();
  }
  expect(out.record.json).toMatchObject({
    status: "failed",
    error_class: "credential_error",
    upstream_status: null,
  });
}

const requestsOf = (clientId: string) => as.requests.filter((r) => r.clientId === clientId);

/**
 * The gateway's log line for an invocation whose credential could not be opened: it says the
 * token endpoint's coarse failure (docs/credentials.md), and nothing of the form or the answer.
 */
function credentialLogLine(invocationId: string): Record<string, unknown> {
  const line = gw.logs.lines.find(
    (l) => l.includes('"msg":"credential could not be opened"') && l.includes(invocationId),
  );
  expect(line, `no credential log line for ${invocationId}`).toBeDefined();
  const json = JSON.parse(line as string) as Record<string, unknown>;
  expect(json).toMatchObject({ invocation_id: invocationId, reason: "token_unavailable" });
  expect(json.detail).toBeUndefined();
  return json;
}

describe("oauth2_client_credentials", () => {
  for (const mode of MODES) {
    it(`${mode}: the upstream gets a token of the AS, fetched once and reused`, async () => {
      const { call, clientId, agentId } = await setup("oauth2_client_credentials");
      const before = upstream.seen.length;
      const first = await invoke(mode, call, agentId);
      const second = await invoke(mode, call, agentId);
      expect(answerOf(first)).toEqual({ status: 200, json: { sub: null } });
      expect(answerOf(second).status).toBe(200);
      const seen = upstream.seen.slice(before);
      expect(seen).toHaveLength(2);
      for (const s of seen) {
        expect(s.payload).toMatchObject({
          client_id: clientId,
          scope: "tools:read",
          aud: "https://upstream.example",
        });
        // The caller's own token never goes upstream.
        expect(s.auth).not.toContain(call.token);
      }
      expect(seen[0]?.auth).toBe(seen[1]?.auth);
      const reqs = requestsOf(clientId);
      expect(reqs).toHaveLength(1);
      expect(reqs[0]).toMatchObject({ grant: "client_credentials", how: "basic" });
      expect(reqs[0]?.form).toMatchObject({ scope: "tools:read", audience: "https://upstream.example" });
    });
  }

  it("client_secret_post sends the client in the form", async () => {
    const { call, clientId, agentId } = await setup("oauth2_client_credentials", {
      authMethod: "client_secret_post",
    });
    expect(answerOf(await invoke("streaming", call, agentId)).status).toBe(200);
    expect(requestsOf(clientId)[0]).toMatchObject({ how: "post" });
  });

  it("a token within 30 s of its expiry is not reused: each call fetches a fresh one", async () => {
    const { call, clientId, agentId } = await setup("oauth2_client_credentials", { expiresIn: 30 });
    for (const mode of MODES) expect(answerOf(await invoke(mode, call, agentId)).status).toBe(200);
    expect(requestsOf(clientId)).toHaveLength(2);
  });

  it("concurrent calls that find no token share one request to the token endpoint", async () => {
    const { call, clientId, agentId } = await setup("oauth2_client_credentials");
    const outs = await Promise.all(Array.from({ length: 8 }, () => invoke("streaming", call, agentId)));
    for (const out of outs) expect(answerOf(out).status).toBe(200);
    expect(requestsOf(clientId)).toHaveLength(1);
  });

  for (const mode of MODES) {
    it(`${mode}: a refused client secret fails the call with credential_error; a rotation fixes it`, async () => {
      const { call, clientId, credId, agentId, secret } = await setup("oauth2_client_credentials", {
        secret: newSecret("wrong"),
      });
      const before = upstream.seen.length;
      const out = await invoke(mode, call, agentId);
      expectCredentialError(mode, out);
      expect(upstream.seen.length).toBe(before);
      expect(requestsOf(clientId)).toHaveLength(1);
      // The AS refused the client (401 invalid_client): the log says so, and not with the secret.
      const logged = credentialLogLine(out.invocationId);
      expect(logged.failure).toBe("token endpoint answered 401");
      expect(JSON.stringify(logged)).not.toContain("invalid_client");
      const put = await call("PUT", `/v1/credentials/${credId}`, { secret });
      responses.push(put.text);
      expect(put.status).toBe(200);
      expect(answerOf(await invoke(mode, call, agentId)).status).toBe(200);
    });
  }

  it("an expired token is never sent: once the upstream refuses the first token, the gateway has fetched a fresh one", async () => {
    // Tokens that live 31 s: cached for 1 s (30 s margin), then the upstream's own check refuses them.
    await Promise.all(
      MODES.map(async (mode) => {
        const { call, clientId, agentId } = await setup("oauth2_client_credentials", { expiresIn: 31 });
        const before = upstream.seen.length;
        // What the upstream accepted from this credential (the two modes run side by side).
        const accepted = () => upstream.seen.slice(before).filter((s) => s.payload?.client_id === clientId);
        expect(answerOf(await invoke(mode, call, agentId)).status).toBe(200);
        const first = accepted()[0]?.auth ?? "";
        expect(first).toMatch(/^Bearer ./);
        // Wait until the token is expired for the upstream (it verifies exp with the AS's JWKS).
        await eventually(async () => ((await as.verify(first.slice(7))) === null ? true : undefined), 45_000);
        const out = await invoke(mode, call, agentId);
        // Accepted: the gateway sent a fresh token, not the expired one (the upstream answers 401).
        expect(answerOf(out)).toEqual({ status: 200, json: { sub: null } });
        expect(accepted().map((s) => s.auth === first)).toEqual([true, false]);
        expect(requestsOf(clientId)).toHaveLength(2);
      }),
    );
  }, 90_000);

  it("a rotation drops the cached token: the next call fetches with the new secret", async () => {
    const { call, clientId, credId, agentId } = await setup("oauth2_client_credentials");
    await invoke("streaming", call, agentId);
    const next = newSecret("client");
    as.clients.set(clientId, { secret: next });
    expect((await call("PUT", `/v1/credentials/${credId}`, { secret: next })).status).toBe(200);
    expect(answerOf(await invoke("streaming", call, agentId)).status).toBe(200);
    expect(requestsOf(clientId)).toHaveLength(2);
  });
});

describe("oauth2_token_exchange", () => {
  for (const mode of MODES) {
    it(`${mode}: the caller's token is exchanged for one of the AS; cached per caller token`, async () => {
      const { call, clientId, agentId } = await setup("oauth2_token_exchange");
      const before = upstream.seen.length;
      const first = await invoke(mode, call, agentId);
      expect(answerOf(first)).toEqual({ status: 200, json: { sub: "user-1" } });
      await invoke(mode, call, agentId);
      // Another token of the same tenant (another user): its own exchange.
      const other = await token(call.tenant, "user-2");
      secrets.push(other);
      expect(answerOf(await invoke(mode, call, agentId, other)).json).toEqual({ sub: "user-2" });
      const seen = upstream.seen.slice(before);
      expect(seen).toHaveLength(3);
      for (const s of seen) {
        expect(s.payload).toMatchObject({
          act: { sub: clientId },
          aud: "https://upstream.example",
        });
        expect(s.auth).not.toContain(call.token);
        expect(s.auth).not.toContain(other);
      }
      const reqs = requestsOf(clientId);
      expect(reqs.map((r) => r.form.subject_token)).toEqual([call.token, other]);
      expect(reqs[0]?.form).toMatchObject({
        grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
        subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
        scope: "tools:read",
        audience: "https://upstream.example",
      });
    });
  }

  it("concurrent calls by one caller cause one exchange at the AS; two callers, one each", async () => {
    // The AS holds each exchange answer, so every call arrives while the first exchange is open.
    const { call, clientId, agentId } = await setup("oauth2_token_exchange", { holdMs: 500 });
    const other = await token(call.tenant, "user-2");
    secrets.push(other);
    const outs = await Promise.all(
      [...Array(6).fill(call.token), ...Array(6).fill(other)].map((bearer) =>
        invoke("streaming", call, agentId, bearer),
      ),
    );
    expect(outs.map((o) => answerOf(o).json.sub)).toEqual([
      ...Array(6).fill("user-1"),
      ...Array(6).fill("user-2"),
    ]);
    const reqs = requestsOf(clientId);
    expect(reqs.map((r) => r.form.subject_token).sort()).toEqual([call.token, other].sort());
    // Another burst by the first caller: served from the cache, no new exchange.
    await Promise.all(Array.from({ length: 4 }, () => invoke("streaming", call, agentId)));
    expect(requestsOf(clientId)).toHaveLength(2);
  });

  it("the stored transactional request holds the caller's token sealed, never in clear", async () => {
    const { call, agentId } = await setup("oauth2_token_exchange");
    const res = await request(`${gw.url}/v1/proxy/${agentId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${call.token}` },
      body: "x",
    });
    await res.body.text();
    const id = res.headers["x-gateway-invocation-id"] as string;
    expect(id).toMatch(/^inv_[0-9a-f-]+$/);
    const rows = (await gw.rt.store.session((exec) =>
      exec(`select job::text as job from invocation_requests where invocation_id = '${id}'`),
    )) as Array<{ job: string }>;
    // The row may already be purged once the call ended; while it exists, the token is sealed.
    for (const row of rows) {
      expect(row.job).toContain("subjectToken");
      expect(row.job).not.toContain(call.token);
    }
    expect((await pollDone(call, agentId, id)).json.status).toBe("succeeded");
  });

  it("a credential that does not exchange tokens stores no caller token", async () => {
    const { call, agentId } = await setup("oauth2_client_credentials");
    const res = await request(`${gw.url}/v1/proxy/${agentId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${call.token}` },
      body: "x",
    });
    await res.body.text();
    const id = res.headers["x-gateway-invocation-id"] as string;
    expect(id).toMatch(/^inv_[0-9a-f-]+$/);
    const rows = (await gw.rt.store.session((exec) =>
      exec(`select job::text as job from invocation_requests where invocation_id = '${id}'`),
    )) as Array<{ job: string }>;
    for (const row of rows) expect(row.job).not.toContain("subjectToken");
    expect((await pollDone(call, agentId, id)).json.status).toBe("succeeded");
  });
});

/** A misbehaving third-party token endpoint: a small local server that answers as `answer` says. */
async function badTokenEndpoint(answer: (res: ServerResponse) => void): Promise<string> {
  const u = await startUpstream((_req, res) => answer(res));
  upstreams.push(u);
  return `${u.url}/token`;
}

describe("a token endpoint that misbehaves fails the call with credential_error", () => {
  const json = (status: number, body: unknown) => (res: ServerResponse) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  // What the endpoint echoes (its error text, a token it should not have sent) never reaches a log.
  const ECHO = `echoed-${randomBytes(8).toString("hex")}`;
  const NOT_A_TOKEN = "token endpoint answer was not a token response";
  const cases: Array<[string, (res: ServerResponse) => void, string]> = [
    [
      "answers 400",
      json(400, { error: "invalid_request", error_description: ECHO }),
      "token endpoint answered 400",
    ],
    [
      "answers 500",
      json(500, { error: "server_error", error_description: ECHO }),
      "token endpoint answered 500",
    ],
    ["answers 503 with no body", (res) => res.writeHead(503).end(), "token endpoint answered 503"],
    [
      "answers garbage",
      (res) => res.writeHead(200, { "content-type": "application/json" }).end(`{not json ${ECHO}`),
      NOT_A_TOKEN,
    ],
    [
      "answers no access_token",
      json(200, { token_type: "Bearer", expires_in: 3600, note: ECHO }),
      NOT_A_TOKEN,
    ],
    [
      "answers a token of another type",
      json(200, { access_token: ECHO, token_type: "mac", expires_in: 3600 }),
      NOT_A_TOKEN,
    ],
    [
      "answers a token with a newline",
      json(200, { access_token: `${ECHO}\r\nX-Evil: 1`, token_type: "Bearer" }),
      NOT_A_TOKEN,
    ],
    [
      "answers a huge body",
      json(200, { access_token: ECHO, pad: "x".repeat(200 * 1024) }),
      "token endpoint answer was larger than 64 KiB",
    ],
    [
      "redirects to the real token endpoint",
      (res) => res.writeHead(302, { location: as.tokenUrl }).end(),
      "token endpoint answered 302",
    ],
  ];
  for (const [label, answer, failure] of cases) {
    for (const mode of MODES) {
      it(`${mode}: ${label}; the log line says "${failure}"`, async () => {
        const tokenUrl = await badTokenEndpoint(answer);
        const { call, clientId, agentId, secret } = await setup("oauth2_client_credentials", { tokenUrl });
        const before = upstream.seen.length;
        const out = await invoke(mode, call, agentId);
        expectCredentialError(mode, out);
        expect(upstream.seen.length).toBe(before);
        // A redirect is not followed: the real token endpoint it names never hears of the client.
        expect(requestsOf(clientId)).toHaveLength(0);
        expect(credentialLogLine(out.invocationId).failure).toBe(failure);
        const logs = gw.logs.text();
        for (const never of [ECHO, secret, call.token, "invalid_request", "server_error"]) {
          expect(logs.includes(never), "the log holds what it must not").toBe(false);
        }
      });
    }
  }

  it("an endpoint that does not listen: the log line says it is unreachable", async () => {
    const gone = await startUpstream((_req, res) => res.end());
    const tokenUrl = `${gone.url}/token`;
    await gone.close();
    const { call, agentId } = await setup("oauth2_client_credentials", { tokenUrl });
    for (const mode of MODES) {
      const out = await invoke(mode, call, agentId);
      expectCredentialError(mode, out);
      expect(credentialLogLine(out.invocationId).failure).toBe("token endpoint unreachable");
    }
  });

  it("times out (5 s) without hanging the call; the log line says it timed out", async () => {
    const tokenUrl = await badTokenEndpoint(() => {}); // never answers
    const { call, agentId } = await setup("oauth2_client_credentials", { tokenUrl });
    const outs = await Promise.all(MODES.map((mode) => invoke(mode, call, agentId)));
    for (const [i, mode] of MODES.entries()) {
      const out = outs[i] as Outcome;
      expectCredentialError(mode, out);
      expect(credentialLogLine(out.invocationId).failure).toBe("token endpoint timed out");
    }
  });

  it("an oauth2_token_exchange call without a caller token to exchange… cannot happen: 401 first", async () => {
    const { agentId } = await setup("oauth2_token_exchange");
    const res = await request(`${gw.url}/v1/proxy/${agentId}/stream`, { method: "POST", body: "x" });
    await res.body.text();
    expect(res.statusCode).toBe(401);
  });
});

describe("secrets and tokens never leave the server", () => {
  it("no client secret, caller token or issued access token in a response, a log line or a receipt", async () => {
    expect(as.issued.length).toBeGreaterThan(10);
    // Each signed receipt, as an auditor reads it: the JWS and its decoded payload.
    for (const { call, id } of invocations) {
      const receipt = await eventually(async () => {
        const r = await call("GET", `/v1/invocations/${id}/receipt`);
        return r.json.attested ? r : undefined;
      }, 5_000);
      const payload = Buffer.from(String(receipt.json.jws).split(".")[1] ?? "", "base64url").toString();
      expect(payload).toContain(id);
      responses.push(receipt.text, payload);
    }
    const logs = gw.logs.text();
    expect(logs).toContain("credential could not be opened");
    const seen = [...responses, logs].join("\n");
    for (const s of [...secrets, ...as.issued]) {
      expect(seen.includes(s), "a secret or token leaked").toBe(false);
    }
  });
});
