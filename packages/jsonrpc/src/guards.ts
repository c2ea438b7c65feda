/** A JSON object as `JSON.parse` gives it: not null, not an array. */
export type JsonObject = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isRecord(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `JSON.parse` that answers undefined instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
