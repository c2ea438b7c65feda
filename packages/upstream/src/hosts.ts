/**
 * Host patterns of a credential's `allowed_hosts`: a host name or IP literal matched exactly, or
 * `*.suffix` matching any name under the suffix (at any depth) but not the suffix itself. Both
 * sides are compared in the WHATWG URL parser's normal form (lower-case, punycode, no trailing
 * dot, IPv4 as a dotted quad, IPv6 in brackets), so `EXAMPLE.com.` and `example.com` agree.
 */

/** A pattern in normal form, or undefined when it is not a host or `*.host`. */
export function normalizeHostPattern(raw: string): string | undefined {
  const wildcard = raw.startsWith("*.");
  const host = normalizeHost(wildcard ? raw.slice(2) : raw);
  if (host === undefined) return undefined;
  // A wildcard over an address or a single label (`*.com`) would allow far more than meant.
  if (wildcard && (host.startsWith("[") || /^[\d.]+$/.test(host) || !host.includes("."))) return undefined;
  return wildcard ? `*.${host}` : host;
}

function normalizeHost(raw: string): string | undefined {
  if (raw === "" || /[\s/?#@:\\]/.test(raw.replace(/^\[.*\]$/, "x"))) return undefined;
  try {
    const url = new URL(`https://${raw}/`);
    if (url.port !== "" || url.pathname !== "/") return undefined;
    const host = url.hostname.replace(/\.$/, "");
    return /^(\[[0-9a-f:.]+\]|[a-z0-9_-]+(\.[a-z0-9_-]+)*)$/.test(host) ? host : undefined;
  } catch {
    return undefined;
  }
}

/** True when `host` (a URL's hostname) is allowed by one of the normalized `patterns`. */
export function hostMatches(host: string, patterns: readonly string[]): boolean {
  const h = normalizeHost(host);
  if (h === undefined) return false;
  return patterns.some((p) => (p.startsWith("*.") ? h.endsWith(p.slice(1)) : h === p));
}

/** The hostname of an upstream URL, or undefined when it does not parse. */
export function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}
