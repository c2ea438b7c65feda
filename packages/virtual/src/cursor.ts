import type { Member } from "./members.ts";

/** Where a merged list walk stands: each member still to be read, with its own cursor (null: its first page). */
export type Walk = Array<{ agentId: string; cursor: string | null }>;

const MAX_CURSOR_CHARS = 16_384;

/** The first page of a merged list: every member, from its first page. */
export function startWalk(members: readonly Member[]): Walk {
  return members.map((m) => ({ agentId: m.agentId, cursor: null }));
}

/**
 * The one opaque `nextCursor` of a merged list: the members still to be read with their own
 * cursors, as base64url JSON. The client only hands it back; nothing in it is trusted beyond
 * naming members of this server (a member that left since is skipped).
 */
export function encodeWalk(walk: Walk): string {
  return Buffer.from(JSON.stringify(walk.map((w) => [w.agentId, w.cursor]))).toString("base64url");
}

/** The walk a cursor names, or null when it is not one of ours (the caller then gets -32602). */
export function decodeWalk(cursor: unknown, members: readonly Member[]): Walk | null {
  if (typeof cursor !== "string" || cursor.length > MAX_CURSOR_CHARS) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length === 0) return null;
  const known = new Set(members.map((m) => m.agentId));
  const walk: Walk = [];
  for (const entry of value) {
    if (!Array.isArray(entry) || entry.length !== 2) return null;
    const [agentId, own] = entry as unknown[];
    if (typeof agentId !== "string" || (own !== null && typeof own !== "string")) return null;
    if (known.has(agentId)) walk.push({ agentId, cursor: own });
  }
  return walk;
}
