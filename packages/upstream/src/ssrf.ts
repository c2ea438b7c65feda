import { isIPv4, isIPv6 } from "node:net";
import { invalid } from "@gw/core";

/**
 * Server-side request forgery rules, shared by the write-time check (agent and facilitator URLs)
 * and the dial-time guard (every connection the gateway opens to an upstream).
 *
 * Addresses are compared as 128-bit integers; IPv4 lives in the IPv4-mapped block ::ffff:0:0/96,
 * so one table covers both families. IPv6 forms that embed an IPv4 address (mapped ::ffff:0:0/96,
 * translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by the address they
 * embed; IPv4-compatible ::/96 and Teredo 2001::/32 are blocked whole. Any other IPv6 address
 * must be global unicast (2000::/3) and outside the blocked table: an allow-list, so a range IANA
 * reserves tomorrow is not reachable today.
 */

type Range = { base: bigint; bits: number };

const V4_MAPPED = 0xffffn << 32n;

function parseV4(ip: string): bigint | undefined {
  if (!isIPv4(ip)) return undefined;
  return ip.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function parseV6(ip: string): bigint | undefined {
  let s = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!isIPv6(s)) return undefined;
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two hextets.
  const dotted = s.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted?.[1] && dotted[2]) {
    const v4 = parseV4(dotted[2]);
    if (v4 === undefined) return undefined;
    s = `${dotted[1]}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = "", tail] = s.split("::") as [string, string | undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  if (groups.length !== 8) return undefined;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
}

/** Any textual address → its 128-bit value (IPv4 as IPv4-mapped), or undefined when not an IP. */
export function parseIp(ip: string): bigint | undefined {
  const v4 = parseV4(ip);
  return v4 !== undefined ? V4_MAPPED | v4 : parseV6(ip);
}

function parseCidr(cidr: string): Range {
  const [addr = "", len] = cidr.split("/");
  const value = parseIp(addr);
  const v4 = isIPv4(addr);
  const max = v4 ? 32 : 128;
  const n = len === undefined ? max : Number(len);
  if (value === undefined || !Number.isInteger(n) || n < 0 || n > max || !/^\d*$/.test(len ?? "")) {
    throw new Error(`invalid CIDR: ${cidr}`);
  }
  const bits = v4 ? 96 + n : n;
  return { base: value & mask(bits), bits };
}

function mask(bits: number): bigint {
  return bits === 0 ? 0n : ((1n << BigInt(bits)) - 1n) << BigInt(128 - bits);
}

function inRange(value: bigint, r: Range): boolean {
  return (value & mask(r.bits)) === r.base;
}

const BLOCKED: Range[] = [
  // IPv4 (RFC 6890 special-purpose and non-global)
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.88.99.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "240.0.0.0/4",
  // IPv6
  "::/96", // unspecified, loopback and IPv4-compatible
  "100::/64", // discard-only
  "64:ff9b:1::/48", // local-use NAT64
  "2001::/23", // IETF protocol assignments, Teredo included
  "2001:db8::/32", // documentation
  "3fff::/20", // documentation
  "5f00::/16", // SRv6 SIDs
  "fc00::/7", // unique local
  "fe80::/10", // link-local
  "fec0::/10", // site-local (deprecated)
  "ff00::/8", // multicast
].map(parseCidr);

const GLOBAL_UNICAST = parseCidr("2000::/3");

/** The IPv4 address an IPv6 value embeds (mapped, translated, NAT64, 6to4), if any. */
function embeddedV4(value: bigint): bigint | undefined {
  if (value >> 32n === 0xffffn) return value & 0xffffffffn; // ::ffff:a.b.c.d
  if (value >> 32n === 0xffff0000n) return value & 0xffffffffn; // ::ffff:0:a.b.c.d (SIIT)
  if (value >> 32n === 0x64ff9b0000000000000000n) return value & 0xffffffffn; // 64:ff9b::/96
  if (value >> 112n === 0x2002n) return (value >> 80n) & 0xffffffffn; // 2002:AABB:CCDD::/48
  return undefined;
}

export type SsrfPolicy = { allow: readonly Range[] };

/** Builds the policy from GW_SSRF_ALLOW_CIDRS; throws on a malformed CIDR. */
export function ssrfPolicy(allowCidrs: readonly string[]): SsrfPolicy {
  return { allow: allowCidrs.map(parseCidr) };
}

/** True when dialling `ip` is refused under `policy`. Anything that is not an IP is refused. */
export function isBlockedIp(ip: string, policy: SsrfPolicy): boolean {
  const value = parseIp(ip);
  if (value === undefined) return true;
  const v4 = embeddedV4(value);
  const candidates = v4 === undefined ? [value] : [value, V4_MAPPED | v4];
  if (candidates.some((c) => policy.allow.some((r) => inRange(c, r)))) return false;
  if (candidates.some((c) => BLOCKED.some((r) => inRange(c, r)))) return true;
  // Plain IPv6 (nothing embedded, not IPv4 itself): only global unicast may be dialled.
  const isV4 = value >> 32n === 0xffffn;
  return v4 === undefined && !isV4 && !inRange(value, GLOBAL_UNICAST);
}

/** Host names that always mean this machine. */
function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.+$/, "");
  return h === "localhost" || h.endsWith(".localhost") || h === "localhost.localdomain" || h === "";
}

/**
 * What a developer pointing an agent at a local server needs to know (README "Calling a local
 * upstream"), and only what is still missing: a variable is named only while the URL needs it,
 * so the advice is never to set what is already set. It names documented variables and says
 * nothing a caller could not learn by writing the URL it suggests.
 */
function localNameHint(url: URL, opts: { policy: SsrfPolicy }): string {
  // Scheme and port only: the rest of the URL (a query may hold a key) is not repeated.
  const address = `${url.protocol}//127.0.0.1${url.port ? `:${url.port}` : ""}/…`;
  if (!isBlockedIp("127.0.0.1", opts.policy)) {
    return ` (localhost names are always refused: use the address instead, ${address})`;
  }
  return ` (localhost names are always refused: use the address, ${address}, and in development allow it with GW_SSRF_ALLOW_CIDRS=127.0.0.1/32)`;
}

/** An http:// URL got here only when http is allowed, so the scheme needs no advice. */
const BLOCKED_ADDRESS_HINT =
  " (a local or private address; in development allow it with GW_SSRF_ALLOW_CIDRS, e.g. 127.0.0.1/32)";

/**
 * Write-time validation of an upstream (or facilitator) URL: scheme, form, no credentials, no
 * local names, no literal address in a blocked range. Names that resolve later are checked by the
 * dial-time guard. Returns the normalized URL.
 */
export function validateUpstreamUrl(
  raw: string,
  opts: { policy: SsrfPolicy; allowHttp: boolean; field?: string },
): string {
  const field = opts.field ?? "upstream_url";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`${field} must be an absolute URL`);
  }
  if (url.protocol !== "https:" && !(opts.allowHttp && url.protocol === "http:")) {
    throw invalid(
      opts.allowHttp
        ? `${field} must use https or http`
        : `${field} must use https (in development, GW_ALLOW_HTTP_UPSTREAMS=true allows http)`,
    );
  }
  if (url.username || url.password) throw invalid(`${field} must not contain credentials`);
  // Port 0 is not a port a server listens on; some stacks read it as "any" or as the default.
  if (url.port === "0") throw invalid(`${field} port is not allowed`);
  const host = url.hostname;
  if (isLocalName(host)) throw invalid(`${field} host is not allowed${localNameHint(url, opts)}`);
  // WHATWG parsing already turned 127.1, 0x7f000001 and 017700000001 into dotted quads.
  const literal = host.startsWith("[") || isIPv4(host);
  if (literal && isBlockedIp(host, opts.policy)) {
    throw invalid(`${field} host is not allowed${BLOCKED_ADDRESS_HINT}`);
  }
  if (!literal && !/^[a-z0-9._-]+$/i.test(host)) throw invalid(`${field} host is not allowed`);
  if (url.hash) url.hash = "";
  return url.toString();
}
