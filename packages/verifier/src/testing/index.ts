import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Bundle } from "../bundle/format.ts";
import { generateSigningKey, type PrivateJwk } from "../bundle/keys.ts";
import { type MintInput, mintBundle } from "../bundle/mint.ts";
import { installWrapper } from "../cli/install.ts";
import { ENVELOPE_SCHEMA } from "../schemas.ts";

export type ReferenceVerifier = {
  /** Absolute path of the installed wrapper: the value for GW_VERIFIER_BINARY. */
  binary: string;
  dir: string;
  privateJwk: PrivateJwk;
  /** Mints a bundle signed with the trusted key. */
  mint: (input: Omit<MintInput, "privateJwk">) => Bundle;
};

/**
 * For tests: a fresh trusted Ed25519 key and the reference verifier installed around it in a
 * temporary directory, exactly as an operator installs it (docs/verifier.md).
 */
export async function installReferenceVerifier(kid = "test-key"): Promise<ReferenceVerifier> {
  const dir = mkdtempSync(join(tmpdir(), "gw-verify-"));
  const { privateJwk, publicJwk } = generateSigningKey(kid);
  const keys = join(dir, "trusted-keys.json");
  writeFileSync(keys, JSON.stringify({ keys: [publicJwk] }));
  const binary = await installWrapper({ keys, out: join(dir, "bin") });
  return { binary, dir, privateJwk, mint: (input) => mintBundle({ ...input, privateJwk }) };
}

/** A JSON-RPC 2.0 tools/call request. */
export function toolsCall(tool: string, args: Record<string, unknown>, id: number | string = 1) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: args } };
}

/** The verified-action envelope around a call and a bundle, serialised. */
export function envelope(call: unknown, authorization: unknown): string {
  return JSON.stringify({ schema: ENVELOPE_SCHEMA, call, authorization });
}
export * from "./programs.ts";
