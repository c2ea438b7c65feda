import { type LookupAddress, lookup } from "node:dns";
import { DomainError } from "@gw/core";
import { isBlockedIp, type SsrfPolicy, validateUpstreamUrl } from "./ssrf.ts";

/** A name that takes longer to resolve is judged on its form alone (like a name that does not resolve). */
const RESOLVE_TIMEOUT_MS = 2_000;

/**
 * Why a URL that an upstream would be asked to call (an A2A push notification webhook) is not
 * allowed, or null when it is: the rules of upstream URLs (scheme, form, no credentials, no local
 * names, no literal blocked address), and a name that resolves now must not resolve to a blocked
 * address. The gateway never dials it itself, so this check is all the guard there is; a name
 * that does not resolve now is accepted, as a written upstream_url is.
 */
export async function webhookRefusal(
  raw: string,
  ssrf: { policy: SsrfPolicy; allowHttp: boolean },
  resolve: typeof lookup = lookup,
): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(validateUpstreamUrl(raw, { ...ssrf, field: "url" }));
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    return e.message.includes("local or private address") || e.message.includes("host is not allowed")
      ? "a local or private address"
      : e.message.replace(/^url /, "");
  }
  const host = url.hostname;
  if (host.startsWith("[") || /^[0-9.]+$/.test(host)) return null;
  const addresses = await new Promise<LookupAddress[]>((done) => {
    const timer = setTimeout(() => done([]), RESOLVE_TIMEOUT_MS);
    resolve(host, { all: true }, (err, found) => {
      clearTimeout(timer);
      done(err ? [] : found);
    });
  });
  return addresses.some((a) => isBlockedIp(a.address, ssrf.policy)) ? "a local or private address" : null;
}
