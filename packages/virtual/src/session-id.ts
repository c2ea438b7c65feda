import { signed } from "./signed.ts";

/** What a client session id of a virtual server names (docs/mcp.md, Older revisions). */
export type SessionClaims = {
  readonly tenantId: string;
  readonly agentId: string;
  readonly revision: string;
  /**
   * The client capabilities the gateway relays for this session (`relays.ts`: elicitation with its
   * modes, sampling, roots), as a canonical string; "" or absent: none.
   */
  readonly relays?: string;
  /** When it was issued, ms since the epoch. */
  readonly issuedAt: number;
};

/** How long a session id is honoured after it was issued. */
export const SESSION_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** Longer values are not ours: refused before any work. */
const MAX_ID_CHARS = 1024;
const PREFIX = "v1.";

/** Issues and verifies the `Mcp-Session-Id` of older-revision clients, statelessly (no table). */
export type SessionIds = {
  issue(claims: Omit<SessionClaims, "issuedAt">, now?: number): string;
  /** The claims of an id this gateway issued, not ended, and not expired; null for anything else. */
  verify(id: string, now?: number): SessionClaims | null;
  /**
   * Ends a session this process was asked to end (its client's `DELETE`): refused from now on,
   * until it would have expired anyway; `onEnded` listeners hear it (to tell the other replicas).
   */
  end(id: string, now?: number): void;
  /** The same for a session another replica ended: no listener is told. */
  endedElsewhere(id: string, now?: number): void;
  onEnded(fn: (id: string, claims: SessionClaims) => void): void;
};

/** Ended sessions held per process at most: the oldest go first (a client can end only its own). */
const MAX_ENDED = 100_000;

/**
 * Session ids signed with `key` (HMAC-SHA-256): `v1.<base64url claims>.<base64url mac>`, visible
 * ASCII as the transport requires. Any replica with the same key verifies them; nothing is stored.
 */
export function sessionIds(key: Buffer): SessionIds {
  const ids = signed(key, PREFIX, MAX_ID_CHARS);
  /** Ended ids, with when each would have expired: insertion order is the order they were ended. */
  const ended = new Map<string, number>();
  const listeners: Array<(id: string, claims: SessionClaims) => void> = [];
  const open = (id: string, now: number): SessionClaims | null => {
    const value = ids.open(id);
    if (!value || value.length < 4 || value.length > 5) return null;
    const [tenantId, agentId, revision, issuedAt, relays = ""] = value;
    if (typeof relays !== "string") return null;
    if (typeof tenantId !== "string" || typeof agentId !== "string" || typeof revision !== "string")
      return null;
    if (typeof issuedAt !== "number" || issuedAt > now + 60_000 || now - issuedAt > SESSION_LIFETIME_MS)
      return null;
    return relays === ""
      ? { tenantId, agentId, revision, issuedAt }
      : { tenantId, agentId, revision, issuedAt, relays };
  };
  const remember = (id: string, now: number): SessionClaims | null => {
    const claims = open(id, now);
    if (!claims || ended.has(id)) return null;
    for (const [old, until] of ended) {
      if (until > now && ended.size < MAX_ENDED) break;
      ended.delete(old);
    }
    ended.set(id, claims.issuedAt + SESSION_LIFETIME_MS);
    return claims;
  };
  return {
    issue: (c, now = Date.now()) =>
      ids.seal(
        c.relays
          ? [c.tenantId, c.agentId, c.revision, now, c.relays]
          : [c.tenantId, c.agentId, c.revision, now],
      ),
    verify: (id, now = Date.now()) => (ended.size > 0 && ended.has(id) ? null : open(id, now)),
    end: (id, now = Date.now()) => {
      const claims = remember(id, now);
      if (claims) for (const fn of listeners) fn(id, claims);
    },
    endedElsewhere: (id, now = Date.now()) => {
      remember(id, now);
    },
    onEnded: (fn) => {
      listeners.push(fn);
    },
  };
}
