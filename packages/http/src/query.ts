import { invalid, LIMITS } from "@gw/core";
import type { Context, MiddlewareHandler } from "hono";
import { hasNul } from "./text.ts";
import { parseTimestamp } from "./timestamp.ts";

/**
 * The query parameters a route takes, declared once where the route is registered:
 * `app.get("/agents", takesQuery(...PAGE_QUERY, "protocol"), handler)`. A parameter it does not
 * take, or one of them given twice (every parameter is single-valued), is a 400 naming it, before
 * the handler runs. `queryRule` extends the rule to every route of an app that declared nothing:
 * such a route takes no query at all. The handler then reads `c.req.query()` as usual.
 */
export function takesQuery(...names: string[]): MiddlewareHandler {
  const taken = Object.freeze([...names]);
  const check: MiddlewareHandler = async (c, next) => {
    refuseQuery(c.req.url, taken);
    await next();
  };
  DECLARED.set(check, taken);
  return check;
}

/** `limit` and `offset`, as pageOf reads them. */
export const PAGE_QUERY = ["limit", "offset"] as const;
/** `since` and `until`, as rangeOf reads them. */
export const RANGE_QUERY = ["since", "until"] as const;

const DECLARED = new WeakMap<object, readonly string[]>();

/** The query parameters a registered handler declares (a `takesQuery` middleware), else undefined. */
export function queryTakenBy(handler: unknown): readonly string[] | undefined {
  return typeof handler === "function" ? DECLARED.get(handler) : undefined;
}

/**
 * Middleware for a whole app or family: a route that declared its parameters with `takesQuery`
 * checks them itself; any other route takes none, so every query parameter on it is a 400.
 * A path no route serves is left to the 404 and 405 answers.
 */
export function queryRule(): MiddlewareHandler {
  return async (c, next) => {
    if (!declaresQuery(c)) refuseQuery(c.req.url, []);
    await next();
  };
}

function declaresQuery(c: Context): boolean {
  // The matched routes in the order they run: the first concrete one is the route that answers.
  const routes = c.req.matchedRoutes;
  const target = routes.find((r) => r.method !== "ALL");
  if (!target) return true;
  return routes.some((r) => r.method === target.method && r.path === target.path && DECLARED.has(r.handler));
}

// A name is quoted back only when it is a short plain identifier (a long one may be a pasted
// secret); anything else is described, not echoed.
const PLAIN_NAME = /^[A-Za-z0-9_.[\]-]{1,32}$/;

function refuseQuery(url: string, taken: readonly string[]): void {
  const q = url.indexOf("?");
  if (q < 0) return;
  const seen = new Set<string>();
  for (const [name] of new URLSearchParams(url.slice(q + 1))) {
    const shown = PLAIN_NAME.test(name) ? `"${name}"` : "with a name this route does not take";
    if (!taken.includes(name)) {
      const takes = taken.length ? `this route takes ${taken.join(", ")}` : "this route takes none";
      throw invalid(`unknown query parameter ${shown}; ${takes}`);
    }
    if (seen.has(name)) throw invalid(`query parameter ${shown} given more than once`);
    seen.add(name);
  }
}

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
