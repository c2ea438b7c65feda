import { isRecord } from "@gw/jsonrpc";
import * as v from "valibot";
import { parseStrictJson } from "./json/strict-parse.ts";

// Objects are checked with `custom`, not `record`: valibot's record drops keys such as
// `__proto__` and `constructor`, and the comparison must see exactly what the verifier printed.
const JsonObject = v.custom<Record<string, unknown>>(isRecord, "must be an object");
const NonEmpty = v.pipe(v.string(), v.minLength(1));

/**
 * The verifier's output contract (docs/verifier.md, What the gateway checks). Decoded strictly: an
 * unknown member, a wrong type or any other verdict is a failed verification.
 */
export const VerifierOutput = v.strictObject({
  status: v.literal("verified"),
  authorization_status: v.literal("authorized"),
  request_digest: v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/)),
  request: v.strictObject({ tool: NonEmpty, arguments: JsonObject }),
  mission: v.strictObject({ principal: NonEmpty, constraints: JsonObject }),
});
export type VerifierOutput = v.InferOutput<typeof VerifierOutput>;

/** Decodes the verifier's stdout, or null when it is not exactly a positive verdict. */
export function decodeVerifierOutput(stdout: Uint8Array): VerifierOutput | null {
  let value: unknown;
  try {
    value = parseStrictJson(stdout).value;
  } catch {
    return null;
  }
  const result = v.safeParse(VerifierOutput, value);
  return result.success ? result.output : null;
}
