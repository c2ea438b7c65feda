import type { PaymentPayloadV2 } from "@x402/core/schemas";

/**
 * @x402/core's `PaymentPayloadV2Schema`, read by hand: the same acceptance and the same output (only
 * the schema's keys, in its order; a `null` where the schema turns one into `undefined`, undefined),
 * at a fraction of the cost of the zod schema, which was the largest part of verifying a paid MCP
 * tool call (docs/performance.md). `payload-v2.test.ts` holds it equal to the schema on valid and
 * broken payloads. Null when it is not one.
 */
export function readPaymentPayloadV2(x: unknown): PaymentPayloadV2 | null {
  if (!isObject(x) || x.x402Version !== 2) return null;
  const resource = nullish(x, "resource", readResource);
  if (resource === BAD) return null;
  const accepted = readRequirements(x.accepted);
  if (accepted === null) return null;
  const payload = readRecord(x.payload);
  if (payload === null) return null;
  const extensions = optionalRecord(x, "extensions");
  if (extensions === BAD) return null;
  const out: Record<string, unknown> = { x402Version: 2 };
  if ("resource" in x) out.resource = resource;
  out.accepted = accepted;
  out.payload = payload;
  if ("extensions" in x) out.extensions = extensions;
  return out as PaymentPayloadV2;
}

/** A rejected member (distinct from every value a member may take, `undefined` and `null` included). */
const BAD: unique symbol = Symbol("bad");
type Obj = Record<string, unknown>;

// zod's `object`/`record`: a non-null, non-array object (JSON gives no Map, Set, Date or Promise).
const isObject = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);
const nonEmpty = (x: unknown): x is string => typeof x === "string" && x.length > 0;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
const label = (x: unknown): x is string =>
  typeof x === "string" && x.length >= 1 && x.length <= 32 && PRINTABLE_ASCII.test(x);

/** `z.record(z.unknown())`: a shallow copy, without a `__proto__` key (zod leaves that one out). */
function readRecord(x: unknown): Obj | null {
  if (!isObject(x)) return null;
  const out: Obj = {};
  for (const k in x) if (k !== "__proto__") out[k] = x[k];
  return out;
}

/** `.nullish().transform((v) => v ?? undefined)` over a member: absent or null is undefined. */
function nullish<T>(o: Obj, key: string, read: (x: unknown) => T | null): T | undefined | typeof BAD {
  const x = o[key];
  if (x === undefined || x === null) return undefined;
  const r = read(x);
  return r === null ? BAD : r;
}

/** `z.record(z.unknown()).optional().nullable()`: null stays null. */
function optionalRecord(o: Obj, key: string): Obj | null | undefined | typeof BAD {
  const x = o[key];
  if (x === undefined || x === null) return x;
  return readRecord(x) ?? BAD;
}

/** `ResourceInfoSchema`. */
function readResource(x: unknown): Obj | null {
  if (!isObject(x) || !nonEmpty(x.url)) return null;
  const out: Obj = { url: x.url };
  const str = (k: string, ok: (s: string) => boolean) => {
    const r = nullish(x, k, (s) => (typeof s === "string" && ok(s) ? s : null));
    if (r === BAD) return false;
    if (k in x) out[k] = r;
    return true;
  };
  if (!str("description", () => true) || !str("mimeType", () => true)) return null;
  if (!str("serviceName", label)) return null;
  const tags = nullish(x, "tags", (t) =>
    Array.isArray(t) && t.length <= 5 && t.every(label) ? [...t] : null,
  );
  if (tags === BAD) return null;
  if ("tags" in x) out.tags = tags;
  if (!str("iconUrl", (s) => s.length <= 2048)) return null;
  return out;
}

/** `PaymentRequirementsV2Schema`. */
function readRequirements(x: unknown): Obj | null {
  if (!isObject(x)) return null;
  const { scheme, network, amount, asset, payTo, maxTimeoutSeconds } = x;
  if (!nonEmpty(scheme) || !nonEmpty(amount) || !nonEmpty(asset) || !nonEmpty(payTo)) return null;
  if (typeof network !== "string" || network.length < 3 || !network.includes(":")) return null;
  // z.number(): any number but NaN (JSON's 1e999 is Infinity, which passes), here positive.
  if (typeof maxTimeoutSeconds !== "number" || !(maxTimeoutSeconds > 0)) return null;
  const extra = optionalRecord(x, "extra");
  if (extra === BAD) return null;
  const out: Obj = { scheme, network, amount, asset, payTo, maxTimeoutSeconds };
  if ("extra" in x) out.extra = extra;
  return out;
}
