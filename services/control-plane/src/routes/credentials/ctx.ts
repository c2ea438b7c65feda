import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { VaultCtx } from "@gw/vault";
import type { Context } from "hono";

export type CredentialRouteDeps = Pick<Runtime, "store" | "keyring" | "ssrf" | "dispatcher" | "config">;

/** The domain context of one request: the caller's tenant, never one taken from input. */
export function vaultCtx(c: Context<AppEnv>, deps: CredentialRouteDeps): VaultCtx {
  return {
    db: deps.store.db,
    tenantId: c.var.principal.tenantId,
    keyring: deps.keyring,
    ssrf: deps.ssrf,
    dispatcher: deps.dispatcher,
  };
}
