import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent, buildConnector } from "undici";
import { isBlockedIp, type SsrfPolicy } from "./ssrf.ts";

/** Raised by the dial-time guard; classified as error_class `ssrf_blocked`. */
export class SsrfBlockedError extends Error {
  override name = "SsrfBlockedError";
  readonly code = "GW_SSRF_BLOCKED";
  constructor() {
    super("upstream address is not allowed");
  }
}

/**
 * A DNS lookup that refuses the whole answer when any address in it is blocked: the address that
 * is checked is the address that is dialled, so a name that rebinds to 127.0.0.1 after the
 * write-time check is still refused. `resolve` is dns.lookup; tests pass a resolver whose answer
 * changes between calls (rebinding).
 */
export function guardedLookup(policy: SsrfPolicy, resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      if (addresses.length === 0 || addresses.some((a) => isBlockedIp(a.address, policy))) {
        return callback(new SsrfBlockedError() as NodeJS.ErrnoException, "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

export type DispatcherOptions = {
  policy: SsrfPolicy;
  connectTimeoutMs: number;
  /** Extra CA certificates (tests); production uses the system store plus NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer | Array<string | Buffer>;
};

/**
 * The one undici Agent every upstream call goes through: keep-alive pools per origin (unbounded:
 * the in-flight limits are the bound), the SSRF
 * guard on every new connection (IP literals checked here, names in the lookup), no redirects
 * (undici follows none unless asked).
 */
export function createUpstreamDispatcher(opts: DispatcherOptions): Agent {
  const connector = buildConnector({
    timeout: opts.connectTimeoutMs,
    lookup: guardedLookup(opts.policy),
    ...(opts.ca ? { ca: opts.ca } : {}),
  } as buildConnector.BuildOptions);
  return new Agent({
    connect: (options, callback) => {
      const host = options.hostname.replace(/^\[|\]$/g, "");
      if (isIP(host) && isBlockedIp(host, opts.policy)) {
        callback(new SsrfBlockedError(), null);
        return;
      }
      connector(options, callback);
    },
    // No per-origin cap: a pool is never the limiter one tenant can exhaust for another (300 slow
    // uploads of one tenant once held all 256 sockets to an origin). Calls in flight are bounded
    // per agent and per tenant by the proxy, and by GW_WORKER_CONCURRENCY (docs/reliability.md).
    connections: null,
    keepAliveTimeout: 30_000,
    pipelining: 1,
  });
}
