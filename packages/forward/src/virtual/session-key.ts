import { createHash } from "node:crypto";
import { type SessionIds, sessionIds } from "@gw/virtual";

/** The configuration the session ids of older-revision clients are signed from. */
export type SessionKeyConfig = {
  readonly GW_MCP_SESSION_SECRET?: string | undefined;
  readonly GW_KMS_KEY?: Buffer | undefined;
};

/** The development key when neither GW_MCP_SESSION_SECRET nor GW_KMS_KEY is set (docs/mcp.md, Older revisions). */
const DEV_SECRET = "agent-gateway development mcp session key";
const cache = new WeakMap<object, SessionIds>();

/**
 * The signer of virtual MCP servers' client session ids (`Mcp-Session-Id` of older revisions),
 * once per configuration: keyed by GW_MCP_SESSION_SECRET, else derived from GW_KMS_KEY (its own
 * label, so no other use of the key is touched), else the development key. A session id grants
 * nothing by itself: every request is still authenticated and its agent looked up in the caller's
 * tenant; the signature makes ids that name another tenant or agent, or that were never issued, 404.
 */
export function sessionsOf(config: SessionKeyConfig): SessionIds {
  let ids = cache.get(config);
  if (!ids) {
    const material = config.GW_MCP_SESSION_SECRET ?? config.GW_KMS_KEY?.toString("base64") ?? DEV_SECRET;
    ids = sessionIds(createHash("sha256").update("gw mcp session id v1\u0000").update(material).digest());
    cache.set(config, ids);
  }
  return ids;
}
