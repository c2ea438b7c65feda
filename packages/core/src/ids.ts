import { uuidv7 } from "uuidv7";

export type IdPrefix = "agt" | "inv" | "cred" | "pdec" | "rcpt" | "evt" | "req";

/** `newId("agt")` → `agt_<uuidv7>`: prefixed, time-sortable, one function for every id. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${uuidv7()}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True when `id` has the given prefix and a well-formed UUID; lets routes answer 404 without a query. */
export function isId(prefix: IdPrefix, id: string): boolean {
  return (
    id.length === prefix.length + 37 &&
    id.startsWith(`${prefix}_`) &&
    UUID_RE.test(id.slice(prefix.length + 1))
  );
}
