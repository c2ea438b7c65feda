// @stores both: credential writes are sealed rows in the store.
import { randomBytes } from "node:crypto";
import { client, newTenant, type Res, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

// The OAuth credential kinds through the credential routes. The token endpoint itself is exercised
// by the gateway's oauth tests; here, what is stored and shown, and what is refused at write.

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp, { GW_LOG_LEVEL: "trace" });
});
afterAll(() => app?.close());

const secrets: string[] = [];
const responses: Res[] = [];
const secret = (label = "client") => {
  const s = `${label}-SECRET-${randomBytes(18).toString("hex")}`;
  secrets.push(s);
  return s;
};

async function asTenant(tenant = newTenant()) {
  const call = client(app.url, await token(tenant));
  return async (...args: Parameters<typeof call>) => {
    const res = await call(...args);
    responses.push(res);
    return res;
  };
}

const TOKEN_URL = "https://auth.example.com/oauth/token";

describe("oauth credentials: create, read, rotate, delete", () => {
  it("stores a client credentials client and shows its settings, never its secret", async () => {
    const call = await asTenant();
    const first = secret();
    const created = await call("POST", "/v1/credentials", {
      name: "svc",
      kind: "oauth2_client_credentials",
      token_url: TOKEN_URL,
      client_id: "gateway-client",
      secret: first,
      scope: "read write",
      audience: "https://api.example.com",
      auth_method: "client_secret_post",
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({
      kind: "oauth2_client_credentials",
      token_url: TOKEN_URL,
      client_id: "gateway-client",
      scope: "read write",
      audience: "https://api.example.com",
      auth_method: "client_secret_post",
      header_name: null,
      version: 1,
    });
    const id = created.json.id as string;
    expect((await call("GET", `/v1/credentials/${id}`)).json).toEqual(created.json);

    // PUT rotates the client secret; settings absent from the body stay, null clears.
    const rotated = await call("PUT", `/v1/credentials/${id}`, { secret: secret(), scope: null });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.json).toMatchObject({
      version: 2,
      token_url: TOKEN_URL,
      client_id: "gateway-client",
      scope: null,
      audience: "https://api.example.com",
      auth_method: "client_secret_post",
    });
    // Moving to token exchange keeps the client; moving to bearer drops it.
    const exchange = await call("PUT", `/v1/credentials/${id}`, {
      secret: secret(),
      kind: "oauth2_token_exchange",
    });
    expect(exchange.json).toMatchObject({ kind: "oauth2_token_exchange", token_url: TOKEN_URL, version: 3 });
    const bearer = await call("PUT", `/v1/credentials/${id}`, { secret: secret(), kind: "bearer" });
    expect(bearer.json).toMatchObject({
      kind: "bearer",
      token_url: null,
      client_id: null,
      auth_method: null,
    });
    // Back to OAuth needs the client again.
    const bare = await call("PUT", `/v1/credentials/${id}`, {
      secret: secret(),
      kind: "oauth2_token_exchange",
    });
    expect(bare.status).toBe(400);
    expect(bare.json).toEqual({ error: "token_url is required for kind oauth2_token_exchange" });
    expect((await call("DELETE", `/v1/credentials/${id}`)).status).toBe(204);
  });

  it("defaults auth_method to client_secret_basic and stores a token exchange client", async () => {
    const call = await asTenant();
    const created = await call("POST", "/v1/credentials", {
      name: "exchange",
      kind: "oauth2_token_exchange",
      token_url: TOKEN_URL,
      client_id: "gw",
      secret: secret(),
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ auth_method: "client_secret_basic", scope: null, audience: null });
  });
});

describe("oauth credentials: bad input is a 400 that names the field", () => {
  const oauth = (more: Record<string, unknown>) => ({
    name: "a",
    kind: "oauth2_client_credentials",
    token_url: TOKEN_URL,
    client_id: "c",
    secret: secret(),
    ...more,
  });
  const cases: Array<[string, () => unknown, string]> = [
    [
      "no token_url",
      () => oauth({ token_url: undefined }),
      "token_url is required for kind oauth2_client_credentials",
    ],
    [
      "no client_id",
      () => oauth({ client_id: undefined }),
      "client_id is required for kind oauth2_client_credentials",
    ],
    [
      "token_url on localhost",
      () => oauth({ token_url: "https://localhost/token" }),
      "token_url host is not allowed (localhost names are always refused: use the address instead, https://127.0.0.1/…)",
    ],
    [
      "token_url on a metadata address",
      () => oauth({ token_url: "https://169.254.169.254/token" }),
      "token_url host is not allowed (a local or private address; in development allow it with GW_SSRF_ALLOW_CIDRS, e.g. 127.0.0.1/32)",
    ],
    [
      "token_url on a private address",
      () => oauth({ token_url: "https://10.0.0.1/token" }),
      "token_url host is not allowed (a local or private address; in development allow it with GW_SSRF_ALLOW_CIDRS, e.g. 127.0.0.1/32)",
    ],
    [
      "token_url with credentials",
      () => oauth({ token_url: "https://u:p@auth.example.com/" }),
      "token_url must not contain credentials",
    ],
    [
      "token_url not a URL",
      () => oauth({ token_url: "auth.example.com" }),
      "token_url must be an absolute URL",
    ],
    [
      "token_url outside allowed_hosts",
      () => oauth({ allowed_hosts: ["api.example.com"] }),
      "token_url host is not in allowed_hosts",
    ],
    [
      "scope on a bearer",
      () => ({ name: "a", kind: "bearer", secret: secret(), scope: "x" }),
      "scope is only valid for the oauth2 kinds",
    ],
    [
      "header_name on oauth",
      () => oauth({ header_name: "X-Key" }),
      "header_name is only valid for kind api_key",
    ],
    [
      "bad auth_method",
      () => oauth({ auth_method: "private_key_jwt" }),
      'auth_method: must be "client_secret_basic", "client_secret_post" or "none"',
    ],
    [
      "scope with a double space",
      () => oauth({ scope: "a  b" }),
      "scope: must be scope tokens separated by single spaces",
    ],
    [
      "client_id with a newline",
      () => oauth({ client_id: "a\nb" }),
      "client_id: must be 1 to 256 printable ASCII characters",
    ],
  ];
  it.each(cases)("%s", async (_label, body, message) => {
    const call = await asTenant();
    const res = await call("POST", "/v1/credentials", body());
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: message });
    expect((await call("GET", "/v1/credentials")).json.total).toBe(0);
  });

  it("a token_url allowed_hosts names is accepted, and a PUT that narrows allowed_hosts past it is refused", async () => {
    const call = await asTenant();
    const created = await call("POST", "/v1/credentials", oauth({ allowed_hosts: ["*.example.com"] }));
    expect(created.status, created.text).toBe(201);
    const narrowed = await call("PUT", `/v1/credentials/${created.json.id}`, {
      secret: secret(),
      allowed_hosts: ["api.example.com"],
    });
    expect(narrowed.json).toEqual({ error: "token_url host is not in allowed_hosts" });
  });
});

describe("oauth credentials: the client secret never leaves the server", () => {
  it("appears in no response and no log line", () => {
    expect(secrets.length).toBeGreaterThan(10);
    const logs = app.logs.text();
    expect(logs).toContain('"msg":"request"');
    const seen = [...responses.map((r) => r.text), logs].join("\n");
    for (const s of secrets) expect(seen).not.toContain(s);
  });
});
