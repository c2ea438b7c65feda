/** Format id of the request envelope a caller posts in verified-action mode. */
export const ENVELOPE_SCHEMA = "gw.gateway.verifier-mcp-call.v1";
/** Format id an authorization bundle must declare (the reference verifier's format, docs/verifier.md). */
export const BUNDLE_SCHEMA = "gw.verifier.authorization-bundle.v1";
/** The constraint keys that bind a verified request to the gateway's tenant and route agent. */
export const TENANT_CONSTRAINT = "gateway.tenant_id";
export const AGENT_CONSTRAINT = "gateway.agent_id";
