import { normalOrigin } from "@gw/config";
import { DomainError } from "@gw/core";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Before step 3, for agents whose protocol checks `Origin` (`Protocol.checksOrigin`: MCP; docs/security.md, Origin check):
 * an `Origin` header that is present and names neither GW_PUBLIC_URL's origin nor one of
 * GW_ALLOWED_ORIGINS → 403, before any bucket is charged or invocation created. No `Origin` (a
 * server-to-server caller) passes. The allowed set is the config's, built once at start-up; a
 * browser sends the normalised form, so one lookup decides, and only a mismatch is parsed.
 */
export function checkOrigin(call: Call, deps: ProxyDeps): Call {
  if (!call.speaks.checksOrigin) return call;
  const origin = call.headers.origin;
  if (origin === undefined) return call;
  const allowed = deps.config.allowedOrigins;
  if (allowed.has(origin)) return call;
  const normal = normalOrigin(origin);
  if (normal !== null && allowed.has(normal)) return call;
  throw new DomainError("forbidden", "origin not allowed");
}
