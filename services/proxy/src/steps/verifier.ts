import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 5 (verified-action mode, DESIGN.md §3): envelope checks, the verifier run, the comparison
 * and the replay preflight, before policy, payment and invocation creation. Passes every call
 * through until verified-action mode is built.
 */
export async function verifyAction(call: Call, _deps: ProxyDeps): Promise<Call> {
  return call;
}
