import { invalid, LIMITS } from "@gw/core";
import type { Call } from "../call.ts";

/**
 * Step 4: X-Gateway-Model, at most 256 bytes (400), recorded on the invocation. An empty header
 * names no model: it is recorded as null, like an absent one, so "no model" has one spelling.
 */
export function checkHeaders(call: Call): Call {
  const model = call.headers["x-gateway-model"];
  const value = Array.isArray(model) ? model.join(",") : (model ?? null);
  if (value !== null && Buffer.byteLength(value) > LIMITS.modelHeaderMaxBytes) {
    throw invalid(`X-Gateway-Model must be at most ${LIMITS.modelHeaderMaxBytes} bytes`);
  }
  call.model = value === "" ? null : value;
  return call;
}
