import { invalid } from "@gw/core";
import { webhookRefusal } from "@gw/upstream";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 5: webhook URLs a request asks the agent to call (an A2A push notification config,
 * docs/a2a.md) pass the SSRF rules of upstreams before anything is forwarded: an agent must not
 * become a way to reach addresses the gateway would refuse. 400, no invocation. The pipeline
 * runs it only for a request that names one.
 */
export async function checkPushUrls(call: Call, deps: ProxyDeps): Promise<Call> {
  for (const url of call.request?.pushUrls ?? []) {
    const refusal = await webhookRefusal(url, deps.ssrf);
    if (refusal !== null) throw invalid(`push notification url is not allowed (${refusal})`);
  }
  return call;
}
