import { invalid, LIMITS } from "@gw/core";
import { hasNul } from "./text.ts";
import { parseTimestamp } from "./timestamp.ts";

/** `limit` (default 20, clamped to 1..max) and `offset` (default 0) of every list. */
export function pageOf(q: Record<string, string | undefined>, max = 100): { limit: number; offset: number } {
  const limit = intParam(q.limit, "limit", LIMITS.listDefaultLimit);
  const offset = intParam(q.offset, "offset", 0);
  if (offset < 0) throw invalid("offset must be a non-negative integer");
  return { limit: Math.min(Math.max(limit, 1), max), offset };
}

function intParam(raw: string | undefined, name: string, dflt: number): number {
  if (raw === undefined || raw === "") return dflt;
  if (!/^-?\d{1,9}$/.test(raw)) throw invalid(`${name} must be an integer`);
  return Number(raw);
}

/** An RFC 3339 date-time query parameter (see parseTimestamp), or undefined when absent; 400 when malformed. */
export function timeParam(raw: string | undefined, name: string): Date | undefined {
  if (raw === undefined || raw === "") return undefined;
  const d = parseTimestamp(raw);
  if (!d) throw invalid(`${name} must be an RFC 3339 date-time with a year 0001..9999`);
  return d;
}

/** A free-text query parameter that reaches Postgres: no NUL, at most `maxBytes`; 400 otherwise. */
export function textParam(raw: string | undefined, name: string, maxBytes = 256): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (hasNul(raw)) throw invalid(`${name} must not contain NUL characters`);
  if (Buffer.byteLength(raw, "utf8") > maxBytes) throw invalid(`${name} must be at most ${maxBytes} bytes`);
  return raw;
}

/** since/until pair: each optional, since ≤ until. */
export function rangeOf(q: Record<string, string | undefined>): { since?: Date; until?: Date } {
  const since = timeParam(q.since, "since");
  const until = timeParam(q.until, "until");
  if (since && until && since > until) throw invalid("since must not be after until");
  return { ...(since ? { since } : {}), ...(until ? { until } : {}) };
}

/** An enum query parameter; 400 naming the allowed values. */
export function enumParam<T extends string>(
  raw: string | undefined,
  name: string,
  values: readonly T[],
): T | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!(values as readonly string[]).includes(raw))
    throw invalid(`${name} must be one of: ${values.join(", ")}`);
  return raw as T;
}
