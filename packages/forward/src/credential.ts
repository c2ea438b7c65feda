import type { Logger } from "@gw/telemetry";
import { CredentialError, type InjectedHeader, openCredential } from "@gw/vault";
import type { ForwardCall } from "./call.ts";
import type { ForwardDeps } from "./deps.ts";

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
  if (!call.credentialRef) return undefined;
  try {
    return await openCredential({
      db: deps.store.db,
      keyring: deps.keyring,
      tenantId: call.tenantId,
      credentialId: call.credentialRef,
      targetHost: host,
      // OAuth kinds fetch (and cache) an access token; token exchange reads the caller's token.
      oauth: deps.oauth,
      subjectToken: call.subjectToken,
      // A per-user credential opens the caller's own grant (docs/connections.md).
      sub: call.sub,
    });
  } catch (e) {
    if (!(e instanceof CredentialError)) throw e;
    caller.log.warn({ invocation_id: call.invocationId, ...e.logFields() }, "credential could not be opened");
    return "refused";
  }
}
