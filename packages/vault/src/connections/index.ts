// Per-user upstream authorization (docs/connections.md): a credential of kind
// oauth2_authorization_code and each person's grant for it.
export * from "./connect.ts";
export * from "./handoff.ts";
export {
  type ConnectionJson,
  ConnectionResource,
  ConnectStartResource,
  CreateConnection,
  listConnections,
  removeConnection,
  revokeGrant,
} from "./manage.ts";
export { connectionToken, type OpenConnectionDeps } from "./open.ts";
export { discoverIssuer } from "./provider.ts";
export type { Owner } from "./repo.ts";
export { rewrapConnections } from "./rewrap.ts";
