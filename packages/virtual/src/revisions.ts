import { isRecord } from "@gw/jsonrpc";
import { type Json, REVISION } from "./protocol.ts";

/**
 * The revisions before 2026-07-28 a virtual server speaks to its members and serves to its
 * clients (docs/mcp.md, Older revisions), newest first: the initialize/session lifecycle.
 */
export const OLDER_REVISIONS: readonly string[] = ["2025-11-25", "2025-06-18", "2025-03-26"];
export const NEWEST_OLDER = "2025-11-25";

export function isOlderRevision(v: unknown): v is string {
  return typeof v === "string" && OLDER_REVISIONS.includes(v);
}

/** Whether a revision is the stateless one (2026-07-28) or later: no initialize, no session. */
export function isStateless(revision: string): boolean {
  return revision >= REVISION;
}

/** The revision an older client's `initialize` gets: the one it asked for, or the newest older one. */
export function clientRevisionOf(requested: unknown): string {
  return isOlderRevision(requested) ? requested : NEWEST_OLDER;
}

/** A result in an older revision's shape: none of 2026-07-28's `resultType`, `ttlMs`, `cacheScope`. */
export function olderResult(result: Json): Json {
  if (!("resultType" in result || "ttlMs" in result || "cacheScope" in result)) return result;
  const { resultType: _r, ttlMs: _t, cacheScope: _c, ...rest } = result;
  return rest;
}

/** A result in 2026-07-28's shape: an older member's result gets the `resultType` the revision requires. */
export function statelessResult(result: Json): Json {
  return "resultType" in result ? result : { ...result, resultType: "complete" };
}

/**
 * A JSON-RPC message re-shaped for a client of `revision` (null: the message as it is). Only a
 * result changes; an error is the same in every revision.
 */
export function shapedFor(message: Json, revision: string): Json {
  if (!isRecord(message.result)) return message;
  const result = isStateless(revision) ? statelessResult(message.result) : olderResult(message.result);
  return result === message.result ? message : { ...message, result };
}

/**
 * Capability flags an older client cannot use through a virtual server: list changes (the merged
 * lists are the gateway's; `resources.subscribe` is served, docs/mcp.md, Server-initiated messages).
 */
const UNSERVED_FLAGS = new Set(["listChanged"]);

/** The merged capabilities as an older client's `initialize` announces them. */
export function olderCapabilities(caps: Json): Json {
  const out: Json = {};
  for (const [name, value] of Object.entries(caps)) {
    if (!isRecord(value)) {
      out[name] = value;
      continue;
    }
    out[name] = Object.fromEntries(Object.entries(value).filter(([flag]) => !UNSERVED_FLAGS.has(flag)));
  }
  return out;
}
