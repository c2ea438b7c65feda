import { parseRfc3339 } from "@gw/core";
import * as v from "valibot";

/**
 * The one rule for timestamps from callers (`parseRfc3339` of @gw/core): RFC 3339 with a year
 * 0001..9999 and a date and time that exist. Returns the instant, or undefined.
 */
export const parseTimestamp = parseRfc3339;

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
