import { createHash } from "node:crypto";
import { isRecord } from "@gw/jsonrpc";
import * as v from "valibot";
import { canonicalJson } from "../json/canonical.ts";
import { BUNDLE_SCHEMA } from "../schemas.ts";

const JsonObject = v.custom<Record<string, unknown>>(isRecord, "must be an object");
const NonEmpty = v.pipe(v.string(), v.minLength(1), v.maxLength(1024));
const Timestamp = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/),
  v.check((s) => Number.isFinite(Date.parse(s)), "must be an RFC 3339 UTC timestamp"),
);

/**
 * The reference verifier's authorization bundle (`gw.verifier.authorization-bundle.v1`, see
 * docs/verifier.md). Everything but `signature` is signed: the Ed25519 signature covers the UTF-8
 * RFC 8785 canonical JSON of the bundle without its `signature` member.
 */
export const Bundle = v.strictObject({
  schema: v.literal(BUNDLE_SCHEMA),
  request: v.strictObject({ tool: NonEmpty, arguments: JsonObject }),
  mission: v.strictObject({ principal: NonEmpty, constraints: JsonObject }),
  /** Random, so that authorizing the same action twice gives two distinct one-shot digests. */
  nonce: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{16,128}$/)),
  issued_at: Timestamp,
  expires_at: Timestamp,
  signature: v.strictObject({
    alg: v.literal("Ed25519"),
    kid: NonEmpty,
    value: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{86}$/)),
  }),
});
export type Bundle = v.InferOutput<typeof Bundle>;
export type UnsignedBundle = Omit<Bundle, "signature">;

/** The bytes the signature covers: canonical JSON of the bundle minus `signature`. */
export function signedBytes(bundle: UnsignedBundle | Bundle): Buffer {
  const { signature: _omit, ...payload } = bundle as Bundle;
  return Buffer.from(canonicalJson(payload), "utf8");
}

/** `sha256:<hex>` of the signed bytes: the verified request's digest, one-shot per tenant. */
export function requestDigest(bundle: UnsignedBundle | Bundle): string {
  return `sha256:${createHash("sha256").update(signedBytes(bundle)).digest("hex")}`;
}
