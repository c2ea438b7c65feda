import { invalid } from "./errors.ts";

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Earliest and latest instants (UTC) accepted from callers: years 0001..9999, which Postgres stores. */
const MIN_MS = new Date("0001-01-01T00:00:00Z").getTime();
const MAX_MS = new Date("9999-12-31T23:59:59.999Z").getTime();

/**
 * Parses an RFC 3339 date-time strictly: every field in range (no 30 February, no hour 24, no
 * leap second), offset within ±23:59, year 0001..9999. Returns undefined for anything else, so a
 * caller's timestamp can answer 400 instead of reaching the database as year 0 or a rolled-over
 * date (`new Date` accepts both).
 */
export function parseRfc3339(raw: string): Date | undefined {
  const m = RFC3339.exec(raw);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59)
    return undefined;
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear does not.
  const probe = new Date(Date.UTC(2000, month - 1, day));
  probe.setUTCFullYear(year);
  if (probe.getUTCDate() !== day) return undefined;
  let offsetMin = 0;
  if (!z) {
    const ohn = Number(oh);
    const omn = Number(om);
    if (ohn > 23 || omn > 59) return undefined;
    offsetMin = (sign === "-" ? -1 : 1) * (ohn * 60 + omn);
  }
  const ms = Math.floor(Number(`0${frac ?? ""}`) * 1000);
  const t = probe.getTime() + ((hour * 60 + minute - offsetMin) * 60 + second) * 1000 + ms;
  if (t < MIN_MS || t > MAX_MS) return undefined;
  return new Date(t);
}

const DAY_MS = 86_400_000;

/**
 * The since/until window of an aggregate read. Defaults: `until` = now, `since` = `until` − 24 h.
 * Both bounds are inclusive; since after until, or a window longer than `maxDays`, is a 400.
 */
export function boundedWindow(
  w: { since?: Date | undefined; until?: Date | undefined },
  maxDays: number,
  now: Date = new Date(),
): { since: Date; until: Date } {
  const until = w.until ?? now;
  const since = w.since ?? new Date(until.getTime() - DAY_MS);
  if (since > until) throw invalid("since must not be after until");
  if (until.getTime() - since.getTime() > maxDays * DAY_MS) {
    throw invalid(`the window from since to until must not exceed ${maxDays} days`);
  }
  return { since, until };
}
