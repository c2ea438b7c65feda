// @stores once: token checks; nothing asserted is read from the store.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mintDevToken } from "@gw/auth";
import { client, newTenant, serveApp, TEST_JWT_SECRET, type TestApp, token } from "@gw/testkit";
import { exportJWK, generateKeyPair, type JWK, SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

// A real JWKS endpoint on a local socket, holding an RSA and an Ed25519 key.
let jwksServer: Server;
let jwksUrl: string;
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
let rsa: KeyPair;
let ed: KeyPair;
let stranger: KeyPair;
let jwksHits = 0;

let app: TestApp;
let devApp: TestApp;
const ISS = "https://issuer.test";
const AUD = "agent-gateway";

beforeAll(async () => {
  rsa = await generateKeyPair("RS256");
  ed = await generateKeyPair("EdDSA", { crv: "Ed25519" });
  stranger = await generateKeyPair("RS256");
  const keys: JWK[] = [
    { ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256", use: "sig" },
    { ...(await exportJWK(ed.publicKey)), kid: "ed-1", alg: "EdDSA", use: "sig" },
  ];
  jwksServer = createServer((_req, res) => {
    jwksHits++;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((r) => jwksServer.listen(0, "127.0.0.1", r));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;
  app = await serveApp(createControlPlaneApp, {
    GW_JWKS_URL: jwksUrl,
    GW_JWT_ISSUER: ISS,
    GW_JWT_AUDIENCE: AUD,
    GW_DEV_JWT_SECRET: undefined,
  });
  devApp = await serveApp(createControlPlaneApp);
});
afterAll(async () => {
  await app?.close();
  await devApp?.close();
  jwksServer?.close();
});

type Claims = Record<string, unknown>;
async function sign(
  claims: Claims,
  opts: {
    key?: KeyPair["privateKey"];
    alg?: string;
    kid?: string;
    iss?: string | null;
    aud?: string | null;
    exp?: number;
  } = {},
) {
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: opts.alg ?? "RS256", kid: opts.kid ?? "rsa-1" })
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? Math.floor(Date.now() / 1000) + 600);
  if (opts.iss !== null) jwt = jwt.setIssuer(opts.iss ?? ISS);
  if (opts.aud !== null) jwt = jwt.setAudience(opts.aud ?? AUD);
  return jwt.sign(opts.key ?? rsa.privateKey);
}

const good = { tenant_id: "tenant-a", sub: "user-a", scope: "agents:read invocations:read_body" };

describe("bearer authentication against a JWKS", () => {
  it("accepts RS256 and EdDSA tokens signed by keys in the JWKS", async () => {
    for (const t of [await sign(good), await sign(good, { key: ed.privateKey, alg: "EdDSA", kid: "ed-1" })]) {
      const res = await client(app.url, t)("GET", "/v1/me");
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        tenant_id: "tenant-a",
        user_id: "user-a",
        scopes: ["agents:read", "invocations:read_body"],
        can_read_invocation_bodies: true,
      });
    }
    expect(jwksHits).toBeGreaterThan(0);
  });

  it("reads scopes from an scp array and reports no body access without the scope", async () => {
    const t = await sign({ tenant_id: "t", sub: "u", scp: ["agents:write"] });
    const res = await client(app.url, t)("GET", "/v1/me");
    expect(res.json).toMatchObject({ scopes: ["agents:write"], can_read_invocation_bodies: false });
    const none = await client(app.url, await sign({ tenant_id: "t", sub: "u" }))("GET", "/v1/me");
    expect(none.json).toMatchObject({ scopes: [], can_read_invocation_bodies: false });
  });

  const cases: Array<[string, () => Promise<Record<string, string>>]> = [
    ["no Authorization header", async () => ({})],
    ["a Basic header", async () => ({ authorization: "Basic dXNlcjpwYXNz" })],
    ["Bearer with nothing after it", async () => ({ authorization: "Bearer " })],
    ["a token that is not a JWT", async () => ({ authorization: "Bearer not-a-jwt" })],
    ["lower-case scheme and two tokens", async () => ({ authorization: `bearer a b` })],
    [
      "alg none",
      async () => ({
        authorization: `Bearer ${new UnsecuredJWT(good).setIssuer(ISS).setAudience(AUD).encode()}`,
      }),
    ],
    [
      "a key that is not in the JWKS",
      async () => ({ authorization: `Bearer ${await sign(good, { key: stranger.privateKey })}` }),
    ],
    [
      "an HS256 token on a JWKS deployment",
      async () => ({
        authorization: `Bearer ${await mintDevToken(TEST_JWT_SECRET, { tenant: "t", sub: "u" })}`,
      }),
    ],
    [
      "an expired token",
      async () => ({
        authorization: `Bearer ${await sign(good, { exp: Math.floor(Date.now() / 1000) - 120 })}`,
      }),
    ],
    [
      "the wrong issuer",
      async () => ({ authorization: `Bearer ${await sign(good, { iss: "https://evil.test" })}` }),
    ],
    ["no issuer", async () => ({ authorization: `Bearer ${await sign(good, { iss: null })}` })],
    [
      "the wrong audience",
      async () => ({ authorization: `Bearer ${await sign(good, { aud: "someone-else" })}` }),
    ],
    ["no tenant claim", async () => ({ authorization: `Bearer ${await sign({ sub: "u" })}` })],
    [
      "an empty tenant claim",
      async () => ({ authorization: `Bearer ${await sign({ sub: "u", tenant_id: "" })}` }),
    ],
    [
      "a numeric tenant claim",
      async () => ({ authorization: `Bearer ${await sign({ sub: "u", tenant_id: 7 })}` }),
    ],
    ["no sub", async () => ({ authorization: `Bearer ${await sign({ tenant_id: "t" })}` })],
    [
      "a tampered payload",
      async () => {
        const [h, , s] = (await sign(good)).split(".");
        const p = Buffer.from(
          JSON.stringify({ ...good, tenant_id: "tenant-b", iss: ISS, aud: AUD }),
        ).toString("base64url");
        return { authorization: `Bearer ${h}.${p}.${s}` };
      },
    ],
  ];

  it.each(cases)("401 with an empty body for %s", async (_label, headers) => {
    for (const path of ["/v1/me", "/v1/agents", "/v1/capabilities", "/v1/agents/agt_x"]) {
      const res = await client(app.url)("GET", path, undefined, await headers());
      expect(res.status, path).toBe(401);
      expect(res.text, path).toBe("");
    }
  });

  it("leaves /healthz and /version open", async () => {
    const call = client(app.url);
    expect((await call("GET", "/healthz")).json).toEqual({ status: "ok" });
    const v = await call("GET", "/version");
    expect(v.status).toBe(200);
    expect(v.json).toEqual({ version: expect.any(String), commit: expect.any(String) });
  });
});

describe("dev HS256 tokens", () => {
  it("work when no JWKS is configured, and a wrong secret does not", async () => {
    const tenant = newTenant();
    const ok = await client(devApp.url, await token(tenant, "dev"))("GET", "/v1/me");
    expect(ok.json).toMatchObject({ tenant_id: tenant, user_id: "dev" });
    const forged = await mintDevToken("another-secret-that-is-32-characters-long!", { tenant, sub: "dev" });
    const res = await client(devApp.url, forged)("GET", "/v1/me");
    expect(res.status).toBe(401);
    expect(res.text).toBe("");
  });
});
