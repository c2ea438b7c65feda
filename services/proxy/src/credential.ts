import type { Logger } from "@gw/telemetry";
import { bearerOf, CredentialError, type InjectedHeader, openCredential } from "@gw/vault";
import type { Call } from "./call.ts";
import type { ProxyDeps } from "./deps.ts";

/**
 * The agent's upstream credential, opened just in time for this one call; `refused` when it cannot
 * be used (the call then fails `credential_error` and never goes out without it).
 */
export async function credentialFor(
  call: Call,
  deps: Pick<ProxyDeps, "store" | "keyring" | "oauth">,
  /** Read only when there is something to log (the request's logger is built on first use). */
  x: { readonly log: Logger },
): Promise<InjectedHeader | undefined | "refused"> {
  if (!call.agent.credentialRef) return undefined;
  try {
    return await openCredential({
      db: deps.store.db,
      keyring: deps.keyring,
      tenantId: call.tenantId,
      credentialId: call.agent.credentialRef,
      // A credential with allowed_hosts opens only towards a host it names.
      targetHost: call.target.host,
      oauth: deps.oauth,
      subjectToken: () => bearerOf(call.headers.authorization),
    });
  } catch (e) {
    if (!(e instanceof CredentialError)) throw e;
    x.log.warn(
      { invocation_id: call.invocationId, reason: e.reason, detail: e.detail },
      "credential could not be opened",
    );
    return "refused";
  }
}
