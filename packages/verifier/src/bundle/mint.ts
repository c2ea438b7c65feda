import { randomBytes, sign } from "node:crypto";
import { BUNDLE_SCHEMA } from "../schemas.ts";
import { type Bundle, signedBytes, type UnsignedBundle } from "./format.ts";
import { signingKeyOf } from "./keys.ts";

export type MintInput = {
  /** The private JWK (with `kid`) the bundle is signed with. */
  privateJwk: unknown;
  request: { tool: string; arguments: Record<string, unknown> };
  mission: { principal: string; constraints: Record<string, unknown> };
  /** Lifetime from `now`; default 300 s. */
  ttlSeconds?: number;
  now?: Date;
  nonce?: string;
};

/** Mints a signed `gw.verifier.authorization-bundle.v1` (for tests and operators; docs/verifier.md). */
export function mintBundle(input: MintInput): Bundle {
  const { kid, key } = signingKeyOf(input.privateJwk);
  const now = input.now ?? new Date();
  const unsigned: UnsignedBundle = {
    schema: BUNDLE_SCHEMA,
    request: input.request,
    mission: input.mission,
    nonce: input.nonce ?? randomBytes(18).toString("base64url"),
    issued_at: now.toISOString(),
    expires_at: new Date(now.getTime() + (input.ttlSeconds ?? 300) * 1000).toISOString(),
  };
  const value = sign(null, signedBytes(unsigned), key).toString("base64url");
  return { ...unsigned, signature: { alg: "Ed25519", kid, value } };
}
