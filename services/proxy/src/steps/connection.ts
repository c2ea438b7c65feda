import { connectionRequired } from "@gw/forward";
import { CredentialError, connectionToken, PER_USER_KIND } from "@gw/vault";
import { routeName } from "@gw/virtual";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 6½: an agent whose credential is per-user (oauth2_authorization_code, docs/connections.md)
 * needs the caller's own grant. Without one, or when the provider refused its refresh, the call is
 * answered "connection required" in its protocol's form before anything is stored or forwarded
 * (no 202 without a grant on the transactional path). The token found is left in the process's
 * cache, where step 9 picks it up. A token endpoint that fails otherwise is step 9's to record
 * (credential_error); a store that does not answer is the caller's 503, as for any step.
 * A virtual server's call routed to one member (tools/call, prompts/get) is checked against that
 * member's credential; fan-out calls are not refused (a member without the caller's grant gives
 * no answer and is left out). An agent with another credential pays one cached kind lookup.
 */
export async function checkConnection(call: Call, deps: ProxyDeps): Promise<Call> {
  const credentialId = call.agent.members ? await routedCredential(call, deps) : call.agent.credentialRef;
  if (!credentialId) return call;
  const kind = await deps.oauth.kindOf(deps.store.db, call.tenantId, credentialId);
  if (kind !== PER_USER_KIND) return call;
  try {
    const credential = await deps.oauth.rowOf(deps.store.db, call.tenantId, credentialId);
    if (credential) {
      await connectionToken(
        { db: deps.store.db, keyring: deps.keyring, ...deps.oauth },
        credential,
        call.principal.userId,
      );
    }
    return call;
  } catch (e) {
    if (!(e instanceof CredentialError)) throw e;
    if (e.reason !== "connection_required") return call;
    const url = `${deps.config.publicUrl}/console/#/connections/${credentialId}`;
    throw connectionRequired(call.agent.protocol, call.request, call.headers, url);
  }
}

/** The credential of the member a virtual server's tools/call or prompts/get goes to, if any. */
async function routedCredential(call: Call, deps: ProxyDeps): Promise<string | null> {
  const method = call.request?.method;
  const kind = method === "tools/call" ? "tool" : method === "prompts/get" ? "prompt" : null;
  const name = (call.request as { name?: string | null } | null)?.name;
  if (kind === null || !name || !call.agent.members) return null;
  const members = call.agent.members.map((m) => ({
    agentId: m.agent_id,
    prefix: m.prefix,
    include: m.include ?? null,
    exclude: m.exclude ?? null,
  }));
  const routed = routeName(members, name, kind);
  if (!routed) return null;
  const member = await deps.agents(call.tenantId, routed.member.agentId);
  return member?.row.credentialRef ?? null;
}
