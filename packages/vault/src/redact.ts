/** What a reflected secret is replaced with in stored copies and response headers. */
export const REDACTED = "[REDACTED]";

/**
 * The spellings of a secret an upstream may send back: as sent, JSON-escaped (a JSON body that
 * echoes a header) and percent-encoded (a URL or form body). Secrets are printable ASCII
 * (credential schema), so these cover what a reflection of the header can look like. Longest
 * first, so a longer spelling is not half-replaced by a shorter one.
 */
function spellingsOf(secret: string): string[] {
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]);
  forms.delete("");
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * Replaces every occurrence of the injected `secret` in `bytes` with `[REDACTED]` (see
 * spellingsOf). Returns the input itself when nothing matched, so the common case copies
 * nothing. Pure: use it on every stored copy of an upstream answer (captured bodies, transactional
 * results) and on anything read back from storage for a caller. A secret split across two
 * stream chunks is not seen: apply it to whole stored bodies, not to chunks.
 */
export function redactSecret(bytes: Uint8Array, secret: string): Uint8Array {
  if (secret === "") return bytes;
  let out = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let changed = false;
  const replacement = Buffer.from(REDACTED);
  for (const form of spellingsOf(secret)) {
    const needle = Buffer.from(form, "utf8");
    let at = out.indexOf(needle);
    if (at < 0) continue;
    const parts: Buffer[] = [];
    let from = 0;
    while (at >= 0) {
      parts.push(out.subarray(from, at), replacement);
      from = at + needle.length;
      at = out.indexOf(needle, from);
    }
    parts.push(out.subarray(from));
    out = Buffer.concat(parts);
    changed = true;
  }
  return changed ? out : bytes;
}

/** `redactSecret` for one string. */
export function redactSecretText(text: string, secret: string): string {
  if (secret === "") return text;
  let out = text;
  for (const form of spellingsOf(secret)) out = out.split(form).join(REDACTED);
  return out;
}

/**
 * A copy of a header map with the secret replaced in every value (string or list), for the
 * response headers sent to the caller and stored with a result. Names are left as they are.
 */
export function redactHeaders<T extends Record<string, string | string[] | number | undefined>>(
  headers: T,
  secret: string,
): T {
  const out: Record<string, string | string[] | number | undefined> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] =
      typeof value === "string"
        ? redactSecretText(value, secret)
        : Array.isArray(value)
          ? value.map((v) => redactSecretText(v, secret))
          : value;
  }
  return out as T;
}
