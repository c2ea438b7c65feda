import type { Runtime } from "@gw/runtime";
import type { ConnectionsCtx } from "@gw/vault";

export type ConnectionRouteDeps = Pick<
  Runtime,
  "store" | "keyring" | "ssrf" | "dispatcher" | "config" | "changes"
>;

export function connectionsCtx(deps: ConnectionRouteDeps): ConnectionsCtx {
  return {
    db: deps.store.db,
    keyring: deps.keyring,
    dispatcher: deps.dispatcher,
    allowHttp: deps.ssrf.allowHttp,
    publicUrl: deps.config.publicUrl,
  };
}
