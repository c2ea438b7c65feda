/**
 * An origin as the `Origin` header carries it (RFC 6454 §7: `scheme "://" host [":" port]`, nothing
 * after), http or https only.
 */
const ORIGIN_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@\s\\]+$/;

/**
 * The normalised origin of `value` (scheme and host in lower case, a default port dropped, an
 * internationalised name in its ASCII form: `HTTPS://Example.COM:443` → `https://example.com`),
 * or null when `value` is not an http(s) origin: `null` (an opaque origin), a path, credentials,
 * another scheme, a malformed host.
 */
export function normalOrigin(value: string): string | null {
  if (!ORIGIN_FORM.test(value) || !URL.canParse(value)) return null;
  const url = new URL(value);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return url.origin;
}
