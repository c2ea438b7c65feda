import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticate, bearerToken, createTokenVerifier, mintDevToken } from "../src/index.ts";

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
let a: KeyPair;
let b: KeyPair;
let server: Server;
let url: string;
let hits = 0;
/** What the JWKS endpoint answers next: a status and a body. */
let answer: { status: number; body: string } = { status: 200, body: "{}" };

const set = async (...entries: Array<[KeyPair, string]>) =>
  JSON.stringify({
    keys: await Promise.all(
      entries.map(
        async ([k, kid]): Promise<JWK> => ({ ...(await exportJWK(k.publicKey)), kid, alg: "RS256" }),
      ),
    ),
  });

beforeAll(async () => {
  a = await generateKeyPair("RS256");
  b = await generateKeyPair("RS256");
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const sign = (key: KeyPair, kid: string, claims: Record<string, unknown> = {}) =>
  new SignJWT({ tenant_id: "t1", sub: "u1", ...claims })
    .setProtectedHeader({ alg: "RS256", kid })
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(key.privateKey);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("JWKS refetch", () => {
  it("recovers from a bad JWKS answer at the next refetch window, not after 30 s", async () => {
    const verify = createTokenVerifier({ jwksUrl: url, tenantClaim: "tenant_id", jwksMinRefetchMs: 300 });
    answer = { status: 500, body: "oops" };
    const token = await sign(a, "a");
    expect(await verify(token)).toBeNull();
    answer = { status: 200, body: await set([a, "a"]) };
    // Poll until the budget allows the next fetch (the test asserts an outcome, not a duration).
    let ok = null;
    for (let i = 0; i < 50 && !ok; i++) {
      ok = await verify(token);
      if (!ok) await sleep(50);
    }
    expect(ok?.tenantId).toBe("t1");
  });

  it("recovers from a key set with duplicate kids, and verifies against either duplicate", async () => {
    const verify = createTokenVerifier({ jwksUrl: url, tenantClaim: "tenant_id", jwksMinRefetchMs: 300 });
    answer = { status: 200, body: await set([b, "dup"], [a, "dup"]) };
    // Both keys are tried: a token from either is accepted.
    expect((await verify(await sign(a, "dup")))?.userId).toBe("u1");
    expect((await verify(await sign(b, "dup", { sub: "u2" })))?.userId).toBe("u2");
    // A set with a rotated key under a new kid is picked up within the refetch budget.
    answer = { status: 200, body: await set([b, "b2"]) };
    const rotated = await sign(b, "b2", { sub: "u3" });
    let ok = null;
    for (let i = 0; i < 50 && !ok; i++) {
      ok = await verify(rotated);
      if (!ok) await sleep(50);
    }
    expect(ok?.userId).toBe("u3");
  });

  it("fetches at most once per window however many unknown kids arrive", async () => {
    const verify = createTokenVerifier({ jwksUrl: url, tenantClaim: "tenant_id" });
    answer = { status: 200, body: await set([a, "a"]) };
    const before = hits;
    expect(await verify(await sign(a, "a"))).not.toBeNull();
    const tokens = await Promise.all(Array.from({ length: 40 }, (_, i) => sign(b, `unknown-${i}`)));
    const results = await Promise.all(tokens.map((t) => verify(t)));
    expect(results.every((r) => r === null)).toBe(true);
    expect(hits - before).toBe(1);
  });
});

describe("claim rules", () => {
  const secret = "s".repeat(40);
  const verify = createTokenVerifier({ devSecret: secret, tenantClaim: "tenant_id" });
  const dev = (claims: Record<string, unknown>, iat?: number) => {
    const jwt = new SignJWT({ tenant_id: "t1", sub: "u1", ...claims })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("10m");
    return (iat === undefined ? jwt.setIssuedAt() : jwt.setIssuedAt(iat)).sign(
      new TextEncoder().encode(secret),
    );
  };
  const now = () => Math.floor(Date.now() / 1000);

  it("accepts the well-formed token", async () => {
    expect(
      await verify(await mintDevToken(secret, { tenant: "acme.eu:prod@x-1", sub: "user" })),
    ).not.toBeNull();
  });

  it.each([
    ["iat ten years ahead", {}, now() + 10 * 365 * 86400],
    ["iat 2 minutes ahead", {}, now() + 120],
    ["tenant with a NUL byte", { tenant_id: "t\u0000x" }, undefined],
    ["tenant with non-Latin-1 characters", { tenant_id: "テナント" }, undefined],
    ["tenant starting with a dot", { tenant_id: ".t" }, undefined],
    ["tenant of 129 characters", { tenant_id: `t${"x".repeat(128)}` }, undefined],
    ["tenant with a space", { tenant_id: "a b" }, undefined],
    ["sub with a newline", { sub: "u\nadmin" }, undefined],
    ["sub with a NUL", { sub: "u\u0000" }, undefined],
    ["sub over 256 bytes", { sub: "é".repeat(129) }, undefined],
  ])("refuses %s", async (_name, claims, iat) => {
    expect(await verify(await dev(claims, iat))).toBeNull();
  });

  it("accepts iat within the 60 s skew and a 256-byte sub", async () => {
    expect(await verify(await dev({ sub: "u".repeat(256) }, now() + 30))).not.toBeNull();
  });

  it("refuses tokens that name their own key (jku, x5u, jwk)", async () => {
    for (const extra of [
      { jku: "https://evil.test/jwks" },
      { x5u: "https://evil.test/x" },
      { jwk: { kty: "oct" } },
    ]) {
      const t = await new SignJWT({ tenant_id: "t1", sub: "u1" })
        .setProtectedHeader({ alg: "HS256", ...extra } as { alg: string })
        .setIssuedAt()
        .setExpirationTime("10m")
        .sign(new TextEncoder().encode(secret));
      expect(await verify(t)).toBeNull();
    }
  });
});

describe("the Authorization header", () => {
  it("reads the Bearer scheme name in any case (RFC 7235 §2.1)", () => {
    for (const scheme of ["Bearer", "bearer", "BEARER", "bEaReR"]) {
      expect(bearerToken(`${scheme} abc.def-_~+/=`)).toBe("abc.def-_~+/=");
    }
    expect(bearerToken("Bearer   abc")).toBe("abc");
  });

  it("tells no bearer token from a malformed one", () => {
    for (const none of [undefined, null, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearerabc"]) {
      expect(bearerToken(none)).toBeNull();
    }
    for (const bad of ["Bearer a b", "Bearer a,b", "bearer é"]) expect(bearerToken(bad)).toBe("malformed");
  });

  it("says invalid_token only when a bearer token was presented (RFC 6750 §3)", async () => {
    const verify = createTokenVerifier({ tenantClaim: "tenant_id", devSecret: "s".repeat(32) });
    const good = await mintDevToken("s".repeat(32), { tenant: "t1", sub: "u1" });
    expect((await authenticate(verify, `bearer ${good}`)).principal?.tenantId).toBe("t1");
    expect(await authenticate(verify, undefined)).toEqual({ principal: null, error: undefined });
    expect(await authenticate(verify, "Basic dXNlcjpwYXNz")).toEqual({ principal: null, error: undefined });
    expect(await authenticate(verify, "Bearer nope")).toEqual({ principal: null, error: "invalid_token" });
    expect(await authenticate(verify, "Bearer a b")).toEqual({ principal: null, error: "invalid_token" });
  });
});
