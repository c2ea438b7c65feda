import type { IncomingHttpHeaders } from "node:http";

/** Hop-by-hop headers (RFC 9110 §7.6.1) plus framing headers the client sets itself. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "expect",
  "http2-settings",
]);

/** Caller headers that never reach the upstream: its credentials, its payment, anything x-gateway-*. */
function isDroppedRequestHeader(lower: string, connectionTokens: Set<string> | undefined): boolean {
  return (
    HOP_BY_HOP.has(lower) ||
    lower === "authorization" ||
    lower === "x-payment" ||
    lower === "payment-signature" ||
    lower.startsWith("x-gateway-") ||
    (connectionTokens?.has(lower) ?? false)
  );
}

function connectionTokensOf(value: string | undefined): Set<string> | undefined {
  if (!value) return undefined;
  // What nearly every peer sends names only hop-by-hop options: nothing more to drop.
  if (value === "keep-alive" || value === "close" || value === "Keep-Alive" || value === "Close")
    return undefined;
  return new Set(value.split(",").map((t) => t.trim().toLowerCase()));
}

export type GatewayHeaders = {
  invocationId: string;
  agentId: string;
  tenantId: string;
  /** The injected upstream credential, if the agent has one. */
  credential?: { header: string; value: string } | undefined;
  /** Keep the caller's content-length (streaming); buffered bodies get theirs from undici. */
  keepContentLength: boolean;
  /**
   * The caller's socket address, appended to `X-Forwarded-For` (after any the caller sent), so an
   * upstream sees the hop the gateway saw. Undefined leaves the caller's header as it was.
   */
  clientAddress?: string | undefined;
};

/**
 * The caller's headers that may reach the upstream, from Node's raw list (flat
 * [name, value, ...], duplicates preserved). MCP headers (Mcp-Session-Id, MCP-Protocol-Version,
 * Accept, Last-Event-ID) pass untouched like any other.
 */
export function forwardableHeaders(
  rawHeaders: readonly string[],
  opts: { keepContentLength: boolean; skip?: string | undefined },
): string[] {
  return forwardable(rawHeaders, opts.keepContentLength, opts.skip, null);
}

/**
 * `forwardableHeaders`, and with `chain` the caller's X-Forwarded-For values taken into it instead
 * of the list: one pass and one list per call where the dial copied the list again to move them.
 */
function forwardable(
  rawHeaders: readonly string[],
  keepContentLength: boolean,
  skip: string | undefined,
  chain: string[] | null,
): string[] {
  let connection: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    // The length first: a name of another length is not lower-cased (a new string) to be compared.
    if (name.length === 10 && name.toLowerCase() === "connection") connection = rawHeaders[i + 1];
  }
  const tokens = connectionTokensOf(connection);
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const lower = name.toLowerCase();
    if (isDroppedRequestHeader(lower, tokens)) continue;
    if (lower === "content-length" && !keepContentLength) continue;
    if (lower === skip) continue;
    if (chain !== null && lower === "x-forwarded-for") chain.push(rawHeaders[i + 1] as string);
    else out.push(name, rawHeaders[i + 1] as string);
  }
  return out;
}

/** The upstream request headers: forwardable caller headers plus the gateway's own. */
export function upstreamRequestHeaders(rawHeaders: readonly string[], g: GatewayHeaders): string[] {
  // The injected credential wins over a caller header of the same name.
  const chain: string[] | null = g.clientAddress !== undefined ? [] : null;
  const out = forwardable(rawHeaders, g.keepContentLength, g.credential?.header.toLowerCase(), chain);
  if (chain !== null) {
    chain.push(g.clientAddress as string);
    out.push("x-forwarded-for", chain.join(", "));
  }
  out.push(
    "x-gateway-invocation-id",
    g.invocationId,
    "x-gateway-agent-id",
    g.agentId,
    "x-gateway-tenant-id",
    g.tenantId,
  );
  if (g.credential) out.push(g.credential.header, g.credential.value);
  return out;
}

/**
 * Response headers only the gateway sets: an upstream must not be able to forge an invocation id,
 * a policy warning or a settlement receipt on the caller's response (docs/interface.md, Proxy).
 */
export function isGatewayResponseHeader(lower: string): boolean {
  return lower.startsWith("x-gateway-") || lower === "x-payment-response" || lower === "payment-response";
}

/**
 * Upstream response headers to send back to the caller, as Node's flat [name, value, ...] list
 * (`writeHead` takes it as is; a repeated header such as Set-Cookie is one pair per value):
 * everything but hop-by-hop headers, the gateway's own (which the gateway adds itself afterwards)
 * and the names in `omit`, each value through `value` (the redaction of a reflected secret).
 */
export function downstreamResponseHeaders(
  headers: IncomingHttpHeaders,
  value: (v: string) => string,
  omit?: string,
): string[] {
  const tokens = connectionTokensOf(typeof headers.connection === "string" ? headers.connection : undefined);
  const out: string[] = [];
  for (const name in headers) {
    const v = headers[name];
    // undici's names are lower case already.
    const lower = name.toLowerCase();
    if (v === undefined || HOP_BY_HOP.has(lower) || tokens?.has(lower) || isGatewayResponseHeader(lower))
      continue;
    if (lower === omit) continue;
    if (typeof v === "string") out.push(name, value(v));
    else for (const one of v) out.push(name, value(one));
  }
  return out;
}
