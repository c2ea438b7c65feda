import { type OwnAnswer, rpcError } from "./protocol.ts";

/**
 * The Streamable HTTP transport's rule that a server validates `Origin` (DNS rebinding): a
 * browser request whose origin names a host other than the one it called (`Host`) or the
 * gateway's public host is refused with 403 and a JSON-RPC error, as the official SDK's servers
 * do. Requests without `Origin` (non-browser clients) pass.
 */
export function originRefusal(
  origin: string | null,
  host: string | null,
  publicHost: string | null,
): OwnAnswer | null {
  if (origin === null) return null;
  const allowed = new Set([hostnameOf(host), publicHost].filter((h): h is string => Boolean(h)));
  let named: string | null = null;
  try {
    named = new URL(origin).hostname;
  } catch {
    named = null;
  }
  if (named !== null && allowed.has(named)) return null;
  return rpcError(403, null, -32000, "Invalid Origin header");
}

/** The host name of a `Host` header value (no port; IPv6 keeps its brackets, as URL.hostname does). */
function hostnameOf(host: string | null): string | null {
  if (!host) return null;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}
