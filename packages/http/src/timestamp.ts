import * as v from "valibot";

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * The one rule for timestamps from callers: RFC 3339 with a year 0001..9999 and a date and time
 * that exist (no February 30th, no 24:00, offsets within ±23:59). Postgres refuses year 0 and
 * JavaScript rolls impossible dates over silently; this refuses both. Returns the instant, or
 * undefined when `raw` is not such a timestamp.
 */
export function parseTimestamp(raw: string): Date | undefined {
  const m = RFC3339.exec(raw);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1 || month < 1 || month > 12 || day < 1) return undefined;
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate();
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 ? (leap ? 29 : 28) : daysInMonth)) return undefined;
  // Second 60 is a leap second in RFC 3339; JavaScript has none, so it is refused, not rounded.
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  if (m[10] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59)) return undefined;
  const d = new Date(raw.replace(" ", "T"));
  if (Number.isNaN(d.getTime())) return undefined;
  // An offset can push 0001-01-01T00:00:00+01:00 into year 0: the instant must stay in range too.
  const y = d.getUTCFullYear();
  return y >= 1 && y <= 9999 ? d : undefined;
}

/** Valibot schema of an RFC 3339 timestamp in a JSON body (output: Date), for write bodies. */
export const Timestamp = v.pipe(
  v.string("must be an RFC 3339 date-time"),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const d = parseTimestamp(dataset.value);
    if (!d) {
      addIssue({ message: "must be an RFC 3339 date-time with a year 0001..9999" });
      return NEVER;
    }
    return d;
  }),
);
