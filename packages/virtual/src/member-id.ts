import { signed } from "./signed.ts";

/**
 * What a gateway id handed to a virtual server's client names, when the id stands for something a
 * member owns: a request the member sent its client during a call or on its GET stream (`request`),
 * or a task the member created (`task`). Any replica holding the key finds the member, the member's
 * session and the member's own id in it; nothing is stored (docs/mcp.md, Server-initiated messages).
 */
export type MemberIdClaims = {
  readonly kind: MemberIdKind;
  readonly tenantId: string;
  readonly agentId: string;
  /** The member agent's id. */
  readonly member: string;
  /** The member's `Mcp-Session-Id` the thing lives in; "" when the member gave none. */
  readonly memberSession: string;
  /** The member's own id (a JSON-RPC id, or a task id). */
  readonly id: string | number;
};
export type MemberIdKind = "request" | "task";

/** Longer values are not ours: refused before any work. */
const MAX_ID_CHARS = 2048;
const PREFIX = "gw1.";
const KIND_CODE: Record<MemberIdKind, string> = { request: "r", task: "t" };

/** Issues and verifies member-scoped gateway ids, statelessly (no table). */
export type MemberIds = {
  issue(claims: MemberIdClaims): string;
  /** The claims of an id this gateway issued for `kind`, in that tenant and agent; null for anything else. */
  verify(kind: MemberIdKind, id: unknown, tenantId: string, agentId: string): MemberIdClaims | null;
};

/**
 * Member-scoped ids signed with `key` (HMAC-SHA-256): `gw1.<base64url claims>.<base64url mac>`. The
 * kind, tenant and agent are inside the signed claims, so an id issued for one tenant, agent or kind
 * does not verify as another's: a forged or foreign id is simply unknown.
 */
export function memberIds(key: Buffer): MemberIds {
  const ids = signed(key, PREFIX, MAX_ID_CHARS);
  return {
    issue: (c) => ids.seal([KIND_CODE[c.kind], c.tenantId, c.agentId, c.member, c.memberSession, c.id]),
    verify: (kind, id, tenantId, agentId) => {
      const value = ids.open(id);
      if (value?.length !== 6) return null;
      const [k, t, a, member, memberSession, own] = value;
      if (k !== KIND_CODE[kind] || t !== tenantId || a !== agentId) return null;
      if (typeof member !== "string" || typeof memberSession !== "string") return null;
      if (typeof own !== "string" && typeof own !== "number") return null;
      return { kind, tenantId, agentId, member, memberSession, id: own };
    },
  };
}
