/** How a row travels in the JSON parameter of the invocation statements, and how SQL reads it back. */

// bytea travels as hex text in the JSON (decoded in SQL), a timestamp as its epoch milliseconds
// (a JS Date has no finer precision; a number is far cheaper to write than an ISO string), every
// other column as its JSON value. A null is left out of the JSON: json_to_recordset reads a
// missing key as null, and thirty `null`s per row were most of its bytes.
export const jsonType = (t: string) => (t === "bytea" ? "text" : t === "timestamptz" ? "int8" : t);
export const value = (expr: string, t: string) =>
  t === "bytea"
    ? `decode(${expr}, 'hex')`
    : t === "timestamptz"
      ? `('epoch'::timestamptz + ${expr} * interval '1 millisecond')`
      : expr;
/** A value as the JSON of the statements carries it (see `value`); null and undefined are left out. */
export const json = (v: unknown): unknown =>
  v === null || v === undefined
    ? undefined
    : v instanceof Date
      ? v.getTime()
      : Buffer.isBuffer(v)
        ? v.toString("hex")
        : v;
/** A nullable scalar (text, number, boolean, JSON object): left out when null. */
export const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);
/** A nullable timestamp as epoch milliseconds. */
export const ms = (v: Date | null | undefined): number | undefined => (v == null ? undefined : v.getTime());
