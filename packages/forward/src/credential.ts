import type { Logger } from "@gw/telemetry";
import { CredentialError, type InjectedHeader, openCredential } from "@gw/vault";
import type { ForwardCall } from "./call.ts";
import type { ForwardDeps } from "./deps.ts";

/** Whose credential is opened, for whom: a relayed call, or a call the gateway makes on its own behalf. */
export type CredentialHolder = {
  readonly tenantId: string;
  readonly credentialRef: string | null;
  /** The caller's token, read only by token exchange (oauth2_token_exchange). */
  readonly subjectToken: () => string | undefined;
  /** The caller (`sub`): a per-user credential opens their own grant (docs/connections.md). */
  readonly sub?: string | null | undefined;
};

/**
 * An agent's credential opened towards `host` (a credential with allowed_hosts opens only towards
 * a host it names); undefined when the agent has none. OAuth kinds fetch (and cache) an access
 * token through the runtime's OAuth client. Throws the vault's CredentialError when it cannot be
 * used.
 */
export function openAgentCredential(
  holder: CredentialHolder,
  host: string,
  deps: Pick<ForwardDeps, "store" | "keyring" | "oauth">,
): Promise<InjectedHeader | undefined> {
  if (!holder.credentialRef) return Promise.resolve(undefined);
  return openCredential({
    db: deps.store.db,
    keyring: deps.keyring,
    tenantId: holder.tenantId,
    credentialId: holder.credentialRef,
    targetHost: host,
    oauth: deps.oauth,
    subjectToken: holder.subjectToken,
    sub: holder.sub,
  });
}

/**
 * The agent's upstream credential, opened just in time for this one call and towards the chosen
 * host (a credential with allowed_hosts opens only towards a host it names); `refused` when it
 * cannot be used: the call then fails `credential_error` and never goes out without it.
 */
export async function openCallCredential(
  call: ForwardCall,
  host: string,
  deps: Pick<ForwardDeps, "store" | "keyring" | "oauth">,
  /** Read only when there is something to log (loggers are built on first use). */
  caller: { readonly log: Logger },
): Promise<InjectedHeader | undefined | "refused"> {
  try {
    return await openAgentCredential(call, host, deps);
  } catch (e) {
    if (!(e instanceof CredentialError)) throw e;
    caller.log.warn({ invocation_id: call.invocationId, ...e.logFields() }, "credential could not be opened");
    return "refused";
  }
}
