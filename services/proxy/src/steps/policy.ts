import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 6: the tenant's policy decides allow, warn or deny; the decision is recorded (denials too).
 * Passes every call through (`call.policy` stays null: no document) until the policy engine lands.
 */
export async function evaluatePolicy(call: Call, _deps: ProxyDeps): Promise<Call> {
  return call;
}
