// @stores once: token verification; decided before the store.
import { createPublicKey } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mintDevToken } from "@gw/auth";
import { client, fillPath, NEVER_IDS, openApiRoutes, TEST_JWT_SECRET, type TestApp } from "@gw/testkit";
import { type Recorded, record, sweepSecrets, Tally } from "@gw/testkit/sweep";
import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "../helpers.ts";

// The token battery against the real all-in-one gateway configured with a JWKS (served over HTTP
// from this process), an issuer and an audience, plus a dev-secret deployment for the HS256 cases.

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
const ISS = "https://issuer.test";
const AUD = "agent-gateway";
let rsa: KeyPair;
let ec: KeyPair;
let attacker: KeyPair;
let jwksServer: Server;
let attackerServer: Server;
let attackerHits = 0;
let jwksUrl: string;
let attackerUrl: string;
let app: TestApp;
let dev: TestApp;
const seen: Recorded[] = [];
const tally = new Tally();

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/jwks.json`;
};

beforeAll(async () => {
  rsa = await generateKeyPair("RS256", { extractable: true });
  ec = await generateKeyPair("ES256");
  attacker = await generateKeyPair("RS256", { extractable: true });
  const keys: JWK[] = [
    { ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256", use: "sig" },
    { ...(await exportJWK(ec.publicKey)), kid: "ec-1", alg: "ES256", use: "sig" },
  ];
  jwksServer = createServer((_q, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys })),
  );
  const attackerKeys = [{ ...(await exportJWK(attacker.publicKey)), kid: "rsa-1", alg: "RS256" }];
  attackerServer = createServer((_q, res) => {
    attackerHits++;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: attackerKeys }));
  });
  jwksUrl = await listen(jwksServer);
  attackerUrl = await listen(attackerServer);
  app = await startGateway({
    GW_JWKS_URL: jwksUrl,
    GW_JWT_ISSUER: ISS,
    GW_JWT_AUDIENCE: AUD,
    GW_DEV_JWT_SECRET: undefined,
  });
  dev = await startGateway();
});
afterAll(async () => {
  tally.print("JWT battery (401 expected for every refused case)");
  if (app) await sweepSecrets(app, seen, []);
  await app?.close();
  await dev?.close();
  jwksServer?.close();
  attackerServer?.close();
});

const now = () => Math.floor(Date.now() / 1000);
const good = { tenant_id: "tenant-a", sub: "user-a" };

type SignOpts = {
  key?: KeyPair["privateKey"];
  header?: Record<string, unknown>;
  iss?: string | null;
  aud?: string | null;
  exp?: number | null;
  iat?: number;
  nbf?: number;
};
function sign(claims: Record<string, unknown>, o: SignOpts = {}) {
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "rsa-1", ...o.header } as {
    alg: string;
  });
  jwt = jwt.setIssuedAt(o.iat ?? now());
  if (o.exp !== null) jwt = jwt.setExpirationTime(o.exp ?? now() + 600);
  if (o.nbf !== undefined) jwt = jwt.setNotBefore(o.nbf);
  if (o.iss !== null) jwt = jwt.setIssuer(o.iss ?? ISS);
  if (o.aud !== null) jwt = jwt.setAudience(o.aud ?? AUD);
  return jwt.sign(o.key ?? rsa.privateKey);
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

async function status(target: TestApp, token: string, path = "/v1/me"): Promise<number> {
  const res = await client(target.url)("GET", path, undefined, { authorization: `Bearer ${token}` });
  record(seen, `GET ${path}`, res);
  if (res.status === 401) expect(res.text).toBe("");
  return res.status;
}

describe("tokens that must be refused (401, empty body)", () => {
  const cases: Array<[string, string, () => Promise<string>]> = [
    [
      "alg",
      "alg none",
      async () =>
        new UnsecuredJWT(good)
          .setIssuer(ISS)
          .setAudience(AUD)
          .setIssuedAt()
          .setExpirationTime("10m")
          .encode(),
    ],
    [
      "alg",
      "alg none, upper case",
      async () =>
        `${b64({ alg: "NONE", kid: "rsa-1" })}.${b64({ ...good, iss: ISS, aud: AUD, exp: now() + 600 })}.`,
    ],
    [
      "alg",
      "alg none with a signature",
      async () => `${b64({ alg: "none" })}.${b64({ ...good, iss: ISS, aud: AUD, exp: now() + 600 })}.AAAA`,
    ],
    [
      "alg confusion",
      "HS256 signed with the RSA public key (PEM) as secret",
      async () => {
        const pem = await exportSPKI(rsa.publicKey);
        return new SignJWT(good)
          .setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
          .setIssuer(ISS)
          .setAudience(AUD)
          .setIssuedAt()
          .setExpirationTime("10m")
          .sign(new TextEncoder().encode(pem));
      },
    ],
    [
      "alg confusion",
      "HS256 signed with the RSA public key (DER) as secret",
      async () => {
        const der = createPublicKey((await exportSPKI(rsa.publicKey)) as string).export({
          type: "spki",
          format: "der",
        });
        return new SignJWT(good)
          .setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
          .setIssuer(ISS)
          .setAudience(AUD)
          .setIssuedAt()
          .setExpirationTime("10m")
          .sign(new Uint8Array(der));
      },
    ],
    [
      "alg confusion",
      "HS256 with the dev secret on the JWKS deployment",
      () => mintDevToken(TEST_JWT_SECRET, { tenant: "t", sub: "u" }),
    ],
    [
      "alg confusion",
      "RS256 token relabelled ES256",
      async () => {
        const [, p, s] = (await sign(good)).split(".");
        return `${b64({ alg: "ES256", kid: "ec-1" })}.${p}.${s}`;
      },
    ],
    [
      "alg confusion",
      "ES256 signature under the RSA kid",
      async () => sign(good, { key: ec.privateKey, header: { alg: "ES256" } }),
    ],
    [
      "key injection",
      "jku pointing at the attacker's JWKS",
      async () => sign(good, { key: attacker.privateKey, header: { jku: attackerUrl } }),
    ],
    [
      "key injection",
      "x5u pointing at the attacker",
      async () => sign(good, { key: attacker.privateKey, header: { x5u: attackerUrl } }),
    ],
    [
      "key injection",
      "embedded jwk of the attacker",
      async () =>
        sign(good, { key: attacker.privateKey, header: { jwk: await exportJWK(attacker.publicKey) } }),
    ],
    [
      "key injection",
      "embedded x5c",
      async () => sign(good, { key: attacker.privateKey, header: { x5c: ["MIIB"] } }),
    ],
    [
      "key injection",
      "jku with a valid signature (still refused)",
      async () => sign(good, { header: { jku: attackerUrl } }),
    ],
    [
      "kid injection",
      "attacker key under the real kid",
      async () => sign(good, { key: attacker.privateKey }),
    ],
    [
      "kid injection",
      "kid path traversal",
      async () => sign(good, { key: attacker.privateKey, header: { kid: "../../../../dev/null" } }),
    ],
    [
      "kid injection",
      "kid SQL",
      async () => sign(good, { key: attacker.privateKey, header: { kid: "' or '1'='1" } }),
    ],
    [
      "kid injection",
      "kid with a NUL",
      async () => sign(good, { key: attacker.privateKey, header: { kid: "rsa-1\u0000" } }),
    ],
    [
      "kid injection",
      "kid of the EC key on an RSA signature",
      async () => sign(good, { header: { kid: "ec-1" } }),
    ],
    [
      "kid injection",
      "no kid, attacker key",
      async () => sign(good, { key: attacker.privateKey, header: { kid: undefined } }),
    ],
    [
      "signature",
      "signature stripped",
      async () => `${(await sign(good)).split(".").slice(0, 2).join(".")}.`,
    ],
    [
      "signature",
      "payload swapped after signing",
      async () => {
        const [h, , s] = (await sign(good)).split(".");
        return `${h}.${b64({ ...good, tenant_id: "tenant-b", iss: ISS, aud: AUD, exp: now() + 600 })}.${s}`;
      },
    ],
    ["time", "expired", async () => sign(good, { exp: now() - 120 })],
    ["time", "no exp (would never expire)", async () => sign(good, { exp: null })],
    ["time", "nbf two minutes ahead", async () => sign(good, { nbf: now() + 120 })],
    [
      "time",
      "iat ten years ahead",
      async () => sign(good, { iat: now() + 10 * 365 * 86400, exp: now() + 11 * 365 * 86400 }),
    ],
    ["time", "iat two minutes ahead", async () => sign(good, { iat: now() + 120 })],
    ["issuer", "wrong iss", async () => sign(good, { iss: "https://evil.test" })],
    ["issuer", "no iss", async () => sign(good, { iss: null })],
    ["issuer", "wrong aud", async () => sign(good, { aud: "someone-else" })],
    ["issuer", "no aud", async () => sign(good, { aud: null })],
    ["claims", "tenant with a NUL", async () => sign({ ...good, tenant_id: "tenant\u0000a" })],
    ["claims", "tenant with non-Latin-1 characters", async () => sign({ ...good, tenant_id: "租户" })],
    ["claims", "tenant with a newline", async () => sign({ ...good, tenant_id: "a\nb" })],
    ["claims", "tenant of 129 characters", async () => sign({ ...good, tenant_id: `a${"b".repeat(128)}` })],
    ["claims", "tenant empty", async () => sign({ ...good, tenant_id: "" })],
    ["claims", "tenant a number", async () => sign({ ...good, tenant_id: 7 })],
    ["claims", "tenant missing", async () => sign({ sub: "u" })],
    ["claims", "sub with a control character", async () => sign({ ...good, sub: "user\u0007" })],
    ["claims", "sub over 256 bytes", async () => sign({ ...good, sub: "ü".repeat(129) })],
    ["claims", "sub missing", async () => sign({ tenant_id: "tenant-a" })],
    ["form", "not a JWT", async () => "not-a-jwt"],
    ["form", "four segments", async () => `${await sign(good)}.x`],
    ["form", "header not JSON", async () => `${Buffer.from("{").toString("base64url")}.${b64(good)}.x`],
  ];

  it.each(cases)("[%s] %s", async (family, _name, make) => {
    const got = await status(app, await make());
    tally.add(family, got === 401);
    expect(got).toBe(401);
  });

  it("never fetched a key from a URL the token named", () => {
    expect(attackerHits).toBe(0);
  });

  it("refuses on every documented route, the proxy paths included", async () => {
    const forged = await sign(good, { key: attacker.privateKey });
    for (const route of (await openApiRoutes(app.url)).filter((r) => !r.public)) {
      const path = fillPath(route, NEVER_IDS);
      const body = route.method === "GET" || route.method === "DELETE" ? undefined : "{}";
      const res = await client(app.url)(route.method, path, body, { authorization: `Bearer ${forged}` });
      record(seen, `${route.method} ${path}`, res);
      tally.add("routes", res.status === 401);
      expect(res.status, `${route.method} ${path}`).toBe(401);
    }
  });

  it("dev deployment: refuses alg none, a wrong secret, a future iat and a bad tenant", async () => {
    const wrong = await mintDevToken("another-secret-of-at-least-32-characters!", { tenant: "t", sub: "u" });
    const none = new UnsecuredJWT({ tenant_id: "t", sub: "u" })
      .setIssuedAt()
      .setExpirationTime("10m")
      .encode();
    const rs = await sign({ tenant_id: "t", sub: "u" }, { iss: null, aud: null });
    const future = await new SignJWT({ tenant_id: "t", sub: "u" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt(now() + 3600)
      .setExpirationTime(now() + 7200)
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const badTenant = await mintDevToken(TEST_JWT_SECRET, { tenant: "bad tenant", sub: "u" });
    const noExp = await new SignJWT({ tenant_id: "t", sub: "u" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt()
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    for (const t of [wrong, none, rs, future, badTenant, noExp]) {
      const got = await status(dev, t);
      tally.add("dev deployment", got === 401);
      expect(got).toBe(401);
    }
  });
});

describe("tokens that must be accepted", () => {
  it.each([
    ["RS256", () => sign(good)],
    ["ES256", () => sign(good, { key: ec.privateKey, header: { alg: "ES256", kid: "ec-1" } })],
    ["iat 30 s ahead (clock skew)", () => sign(good, { iat: now() + 30 })],
    ["a sub of exactly 256 bytes", () => sign({ ...good, sub: "u".repeat(256) })],
    ["a tenant using every allowed character", () => sign({ ...good, tenant_id: "Acme.eu:prod@x-9" })],
  ])("%s", async (_name, make) => {
    const got = await status(app, await make());
    tally.add("accepted (200 expected)", got !== 200);
    expect(got).toBe(200);
  });
});

describe("GW_JWT_REQUIRE_EXP=false", () => {
  it("accepts a token without exp only when the deployment opts out", async () => {
    const gw = await startGateway({ GW_JWT_REQUIRE_EXP: "false" });
    try {
      const noExp = await new SignJWT({ tenant_id: "t", sub: "u" })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuedAt()
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
      expect(await status(gw, noExp)).toBe(200);
      expect(await status(dev, noExp)).toBe(401);
      // An expired token is still refused: the opt-out concerns a missing exp only.
      const expired = await new SignJWT({ tenant_id: "t", sub: "u" })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuedAt(now() - 7200)
        .setExpirationTime(now() - 3600)
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
      expect(await status(gw, expired)).toBe(401);
    } finally {
      await gw.close();
    }
  });

  it("dev tokens minted by the project always carry exp", async () => {
    const t = await mintDevToken(TEST_JWT_SECRET, { tenant: "t", sub: "u" });
    const payload = JSON.parse(Buffer.from(t.split(".")[1] ?? "", "base64url").toString()) as {
      exp?: unknown;
    };
    expect(typeof payload.exp).toBe("number");
    await expect(mintDevToken(TEST_JWT_SECRET, { tenant: "t", sub: "u", ttlSeconds: 0 })).rejects.toThrow();
    await expect(
      mintDevToken(TEST_JWT_SECRET, { tenant: "t", sub: "u", ttlSeconds: Number.NaN }),
    ).rejects.toThrow();
  });
});

describe("key set outages and rotation", () => {
  it("accepts valid tokens again within seconds of a bad JWKS answer, and picks up a rotated key", async () => {
    let answer: () => { status: number; body: string } = () => ({ status: 500, body: "down" });
    const server = createServer((_q, res) => {
      const a = answer();
      res.writeHead(a.status, { "content-type": "application/json" }).end(a.body);
    });
    const url = await listen(server);
    const gw = await startGateway({ GW_JWKS_URL: url, GW_DEV_JWT_SECRET: undefined });
    try {
      const token = await sign(good, { iss: null, aud: null });
      expect(await status(gw, token)).toBe(401);
      const keys = [{ ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256" }];
      answer = () => ({ status: 200, body: JSON.stringify({ keys }) });
      // The next refetch is allowed 5 s after the failed one; poll for the outcome (not a duration).
      const until = Date.now() + 20_000;
      let got = 401;
      while (got !== 200 && Date.now() < until) {
        got = await status(gw, token);
        if (got !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      tally.add("recovery (200 expected)", got !== 200);
      expect(got).toBe(200);

      // Rotation: a token signed by a new key under a new kid works once the issuer publishes it.
      const next = await generateKeyPair("RS256");
      const rotated = [...keys, { ...(await exportJWK(next.publicKey)), kid: "rsa-2", alg: "RS256" }];
      answer = () => ({ status: 200, body: JSON.stringify({ keys: rotated }) });
      const fresh = await sign(good, {
        key: next.privateKey,
        header: { kid: "rsa-2" },
        iss: null,
        aud: null,
      });
      got = 401;
      while (got !== 200 && Date.now() < until + 10_000) {
        got = await status(gw, fresh);
        if (got !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      tally.add("recovery (200 expected)", got !== 200);
      expect(got).toBe(200);
    } finally {
      await gw.close();
      server.close();
    }
  });
});
