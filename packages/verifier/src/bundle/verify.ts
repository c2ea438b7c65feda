import { type KeyObject, verify } from "node:crypto";
import * as v from "valibot";
import { parseStrictJson } from "../json/strict-parse.ts";
import { Bundle, requestDigest, signedBytes } from "./format.ts";

/** Clock skew tolerated on `issued_at`. */
const SKEW_MS = 60_000;

export type BundleVerdict =
  | {
      status: "verified";
      authorization_status: "authorized";
      request_digest: string;
      request: Bundle["request"];
      mission: Bundle["mission"];
    }
  | {
      status: "rejected";
      reason: "malformed" | "unknown_key" | "bad_signature" | "not_yet_valid" | "expired";
    };

/**
 * The reference verifier: strict JSON (duplicate keys refused), the bundle format, a trusted key by
 * `kid`, the Ed25519 signature over the canonical payload, then the validity window. The verdict
 * is the gateway's output contract; the printed objects are the signed ones, unchanged.
 */
export function verifyBundle(bytes: Uint8Array, trusted: ReadonlyMap<string, KeyObject>, now = new Date()) {
  let raw: unknown;
  try {
    raw = parseStrictJson(bytes).value;
  } catch {
    return rejected("malformed");
  }
  const parsed = v.safeParse(Bundle, raw);
  if (!parsed.success) return rejected("malformed");
  // Sign-checked bytes come from the parsed input itself, not from the validator's copy.
  const bundle = raw as Bundle;
  const key = trusted.get(bundle.signature.kid);
  if (key === undefined) return rejected("unknown_key");
  const signature = Buffer.from(bundle.signature.value, "base64url");
  if (!verify(null, signedBytes(bundle), key, signature)) return rejected("bad_signature");
  if (Date.parse(bundle.issued_at) > now.getTime() + SKEW_MS) return rejected("not_yet_valid");
  if (Date.parse(bundle.expires_at) <= now.getTime()) return rejected("expired");
  const verdict: BundleVerdict = {
    status: "verified",
    authorization_status: "authorized",
    request_digest: requestDigest(bundle),
    request: bundle.request,
    mission: bundle.mission,
  };
  return verdict;
}

function rejected(reason: Extract<BundleVerdict, { status: "rejected" }>["reason"]): BundleVerdict {
  return { status: "rejected", reason };
}
