import { randomFillSync } from "node:crypto";
import { V7Generator } from "uuidv7";

export type IdPrefix = "agt" | "inv" | "cred" | "pdec" | "rcpt" | "evt" | "req" | "apr" | "aud";

/**
 * Random words for the UUIDv7 generator, drawn from the CSPRNG 4 KiB at a time (the package's own
 * source refills every 32 bytes: a call into WebCrypto every other id, on the proxy's hot path).
 */
const pool = new Uint32Array(1024);
let cursor = pool.length;
const generator = new V7Generator({
  nextUint32() {
    if (cursor === pool.length) {
      randomFillSync(pool);
      cursor = 0;
    }
    return pool[cursor++] as number;
  },
});

/** `newId("agt")` → `agt_<uuidv7>`: prefixed, time-sortable, one function for every id. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${generator.generate().toString()}`;
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
