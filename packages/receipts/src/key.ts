import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, type JWK } from "jose";

export type ReceiptKey = {
  privateKey: KeyObject;
  /** RFC 7638 thumbprint of the public key: the `kid` of every receipt and of the JWKS entry. */
  kid: string;
  /** The public half only, as published at /v1/receipts/jwks. */
  publicJwk: JWK & { kid: string };
};

/** Thrown for a key that cannot be used; the message never contains key material. */
export class ReceiptKeyError extends Error {
  override name = "ReceiptKeyError";
}

/**
 * Reads GW_RECEIPT_SIGNING_KEY: an Ed25519 private JWK (`kty: "OKP"`, `crv: "Ed25519"`, `d`, `x`).
 * The public key is derived from `d`, and a given `x` that does not match it is refused, so the
 * published key is always the one that signs.
 */
export async function loadReceiptKey(json: string): Promise<ReceiptKey> {
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new ReceiptKeyError("must be a JSON Web Key");
  }
  if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) {
    throw new ReceiptKeyError("must be a JSON Web Key");
  }
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519") throw new ReceiptKeyError("must be an Ed25519 key (OKP)");
  if (typeof jwk.d !== "string") throw new ReceiptKeyError("must be a private key (with d)");
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({
      key: { kty: "OKP", crv: "Ed25519", d: jwk.d, x: typeof jwk.x === "string" ? jwk.x : "" },
      format: "jwk",
    });
  } catch {
    throw new ReceiptKeyError("is not a valid Ed25519 private key");
  }
  const pub = createPublicKey(privateKey).export({ format: "jwk" }) as JWK;
  if (typeof jwk.x === "string" && jwk.x !== pub.x) {
    throw new ReceiptKeyError("has an x that does not match its d");
  }
  const publicJwk = { kty: "OKP", crv: "Ed25519", x: pub.x as string };
  const kid = await calculateJwkThumbprint(publicJwk, "sha256");
  return { privateKey, kid, publicJwk: { ...publicJwk, kid, alg: "EdDSA", use: "sig" } };
}
