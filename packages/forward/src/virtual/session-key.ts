import { createHash } from "node:crypto";
import type { Runtime } from "@gw/runtime";
import { type MemberIds, memberIds, type SessionIds, sessionIds } from "@gw/virtual";

/** The configuration the session ids of older-revision clients are signed from. */
export type SessionKeyConfig = {
  readonly GW_MCP_SESSION_SECRET?: string | undefined;
  readonly GW_KMS_KEY?: Buffer | undefined;
};

/** The development key when neither GW_MCP_SESSION_SECRET nor GW_KMS_KEY is set (docs/mcp.md, Older revisions). */
const DEV_SECRET = "agent-gateway development mcp session key";
const sessionCache = new WeakMap<object, SessionIds>();
const memberCache = new WeakMap<object, MemberIds>();

/** A key of its own per label, from GW_MCP_SESSION_SECRET, else GW_KMS_KEY, else the development key. */
function keyFor(config: SessionKeyConfig, label: string): Buffer {
  const material = config.GW_MCP_SESSION_SECRET ?? config.GW_KMS_KEY?.toString("base64") ?? DEV_SECRET;
  return createHash("sha256").update(label).update("\u0000").update(material).digest();
}

/**
 * The signer of virtual MCP servers' client session ids (`Mcp-Session-Id` of older revisions),
 * once per configuration: keyed by GW_MCP_SESSION_SECRET, else derived from GW_KMS_KEY (its own
 * label, so no other use of the key is touched), else the development key. A session id grants
 * nothing by itself: every request is still authenticated and its agent looked up in the caller's
 * tenant; the signature makes ids that name another tenant or agent, or that were never issued, 404.
 */
export function sessionsOf(config: SessionKeyConfig): SessionIds {
  let ids = sessionCache.get(config);
  if (!ids) {
    ids = sessionIds(keyFor(config, "gw mcp session id v1"));
    sessionCache.set(config, ids);
  }
  return ids;
}

/**
 * The signer of member-scoped gateway ids (a member's request relayed to the client, a member's
 * task): the same key material as session ids under a label of its own.
 */
export function memberIdsOf(config: SessionKeyConfig): MemberIds {
  let ids = memberCache.get(config);
  if (!ids) {
    ids = memberIds(keyFor(config, "gw mcp member id v1"));
    memberCache.set(config, ids);
  }
  return ids;
}

/**
 * Ended sessions are refused by every replica: a session this process ends (its client's `DELETE`)
 * is told to the others through the change notifications, and one they end is remembered here.
 * A replica that starts later does not know the sessions ended before it (docs/mcp.md).
 */
export function shareSessionEnds(rt: Pick<Runtime, "config" | "changes">): void {
  const sessions = sessionsOf(rt.config);
  sessions.onEnded(
    (id, claims) => void rt.changes.publish({ kind: "session", tenantId: claims.tenantId, id }),
  );
  rt.changes.subscribe((change) => {
    if (change.kind === "session" && change.id) sessions.endedElsewhere(change.id);
  });
}
