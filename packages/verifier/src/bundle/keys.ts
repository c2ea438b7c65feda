import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import * as v from "valibot";

const PublicJwk = v.object({
  kty: v.literal("OKP"),
  crv: v.literal("Ed25519"),
  x: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/)),
  kid: v.pipe(v.string(), v.minLength(1)),
});
const PrivateJwk = v.object({ ...PublicJwk.entries, d: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/)) });
export type PublicJwk = v.InferOutput<typeof PublicJwk>;
export type PrivateJwk = v.InferOutput<typeof PrivateJwk>;

const TrustedKeys = v.object({ keys: v.array(PublicJwk) });

/** A new Ed25519 signing key as JWKs; the private one stays with whoever mints bundles. */
export function generateSigningKey(kid: string): { privateJwk: PrivateJwk; publicJwk: PublicJwk } {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  const privateJwk = v.parse(PrivateJwk, { ...jwk, kid });
  const { d: _secret, ...publicJwk } = privateJwk;
  return { privateJwk, publicJwk };
}

/** Parses a private JWK (the file `gw-verify keygen` writes). Throws on anything else. */
export function signingKeyOf(json: unknown): { kid: string; key: KeyObject } {
  const jwk = v.parse(PrivateJwk, json);
  return { kid: jwk.kid, key: createPrivateKey({ key: jwk, format: "jwk" }) };
}

/** Reads a trusted-keys file `{"keys":[<Ed25519 public JWK with kid>...]}` into kid → key. */
export function loadTrustedKeys(path: string): Map<string, KeyObject> {
  const parsed = v.parse(TrustedKeys, JSON.parse(readFileSync(path, "utf8")));
  const keys = new Map<string, KeyObject>();
  for (const { kid, kty, crv, x } of parsed.keys) {
    keys.set(kid, createPublicKey({ key: { kty, crv, x }, format: "jwk" }));
  }
  return keys;
}
