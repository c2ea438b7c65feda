import { readFile } from "node:fs/promises";
import {
  type CompactVerifyGetKey,
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  type JSONWebKeySet,
} from "jose";
import type { ReceiptPayload } from "./sign.ts";

const decoder = new TextDecoder();

/** Key resolver for a JWKS given as an object, a file path, or an http(s) URL. */
export async function jwksFrom(source: JSONWebKeySet | string): Promise<CompactVerifyGetKey> {
  if (typeof source !== "string") return createLocalJWKSet(source);
  if (/^https?:\/\//i.test(source)) return createRemoteJWKSet(new URL(source));
  return createLocalJWKSet(JSON.parse(await readFile(source, "utf8")) as JSONWebKeySet);
}

/**
 * Verifies a receipt offline: EdDSA only, key chosen by the header's `kid`. Throws when the
 * signature, the payload or the key does not match; returns the signed payload otherwise.
 */
export async function verifyReceipt(jws: string, keys: CompactVerifyGetKey): Promise<ReceiptPayload> {
  const { payload } = await compactVerify(jws.trim(), keys, { algorithms: ["EdDSA"] });
  return JSON.parse(decoder.decode(payload)) as ReceiptPayload;
}
