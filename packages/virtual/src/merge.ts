import { isRecord } from "@gw/jsonrpc";
import type { Member } from "./members.ts";
import { exposedName, keeps } from "./names.ts";
import type { Json } from "./protocol.ts";

/** The merged lists: the key of each list's items and how a member's item is exposed. */
export const LISTS = {
  "tools/list": { key: "tools", rename: true },
  "prompts/list": { key: "prompts", rename: true },
  "resources/list": { key: "resources", rename: false },
  "resources/templates/list": { key: "resourceTemplates", rename: false },
} as const;
export type ListMethod = keyof typeof LISTS;

/**
 * A member's page of a list as the virtual server exposes it: tools and prompts that pass the
 * member's include/exclude patterns, renamed `<prefix>__<name>`; resources and templates as they
 * are (URIs are not namespaced).
 */
export function exposeItems(method: ListMethod, member: Member, page: Json): unknown[] {
  const { key, rename } = LISTS[method];
  const items = Array.isArray(page[key]) ? (page[key] as unknown[]) : [];
  if (!rename) return items;
  const out: unknown[] = [];
  for (const item of items) {
    if (!isRecord(item) || typeof item.name !== "string" || !keeps(member, item.name)) continue;
    out.push({ ...item, name: exposedName(member, item.name) });
  }
  return out;
}

/**
 * What the revision requires of a merged result: `resultType`, and the cache hints of the members
 * combined so that no member's answer is kept longer or shared wider than it allowed: the smallest
 * `ttlMs` (a member that gave none counts as 0), `public` only when every member said so.
 */
export function cacheHints(pages: readonly Json[]): Json {
  let ttlMs = Number.POSITIVE_INFINITY;
  let everyPublic = pages.length > 0;
  for (const page of pages) {
    const ttl = typeof page.ttlMs === "number" && page.ttlMs >= 0 ? page.ttlMs : 0;
    ttlMs = Math.min(ttlMs, ttl);
    if (page.cacheScope !== "public") everyPublic = false;
  }
  return {
    resultType: "complete",
    ttlMs: Number.isFinite(ttlMs) ? ttlMs : 0,
    cacheScope: everyPublic ? "public" : "private",
  };
}

/**
 * The members' capabilities merged: a capability any member has, with each flag set when any
 * member sets it (a client may then ask for it; members without it answer as they do).
 */
export function mergeCapabilities(all: readonly unknown[]): Json {
  const out: Json = {};
  for (const caps of all) {
    if (!isRecord(caps)) continue;
    for (const [name, value] of Object.entries(caps)) {
      const into = isRecord(out[name]) ? (out[name] as Json) : {};
      if (isRecord(value)) {
        for (const [flag, set] of Object.entries(value)) if (into[flag] !== true) into[flag] = set;
      }
      out[name] = into;
    }
  }
  return out;
}
