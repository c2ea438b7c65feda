import { authenticate, type BearerError } from "@gw/auth";
import { DomainError } from "@gw/core";
import { type DirectListener, serveExchange } from "@gw/http";
import type { ProxyDeps } from "./deps.ts";
import type { ProxyExchange } from "./exchange.ts";
import { streamCall } from "./routes/stream.ts";
import { transactCall } from "./routes/transact.ts";
import { timeline } from "./timeline.ts";

const PREFIX = "/v1/proxy/";
const TRANSACT = "/v1/proxy/:id";
const STREAM = "/v1/proxy/:id/stream";

/** The routes `createDirect` serves (the OpenAPI coverage test lists them beside the Hono ones). */
export const DIRECT_ROUTES: ReadonlyArray<{ method: string; path: string }> = [
  { method: "POST", path: TRANSACT },
  { method: "POST", path: STREAM },
  { method: "GET", path: STREAM },
  { method: "DELETE", path: STREAM },
];

/**
 * The two proxy routes, served on Node's own request and response (the hot path pays for no
 * framework, docs/performance.md):
 *
 * - `POST /v1/proxy/{id}` → routes/transact.ts
 * - `POST|GET|DELETE /v1/proxy/{id}/stream` → routes/stream.ts
 *
 * Anything else (the poll, 405s, health) is left to the Hono app. Authentication is the same as
 * the Hono apps' `requireAuth`: 401, no body, `WWW-Authenticate` naming the resource metadata and,
 * for a refused token, `error="invalid_token"`.
 */
export function createDirect(
  deps: ProxyDeps,
  challenge: (path: string, error: BearerError | undefined) => string,
): DirectListener {
  return (req, res) => {
    const match = routeOf(req.method ?? "", req.url ?? "");
    if (!match) return false;
    if (timeline && match.route === TRANSACT) timeline.mark(req, "arrived");
    serveExchange(deps.logger, req, res, match.route, async (x) => {
      const found = authenticate(deps.verifyToken, req.headers.authorization);
      // A remembered token (most calls): no promise to wait for.
      const { principal, error } = found instanceof Promise ? await found : found;
      if (!principal) {
        throw new DomainError("unauthenticated", "unauthenticated", {
          headers: { "WWW-Authenticate": challenge(x.path, error) },
        });
      }
      const call: ProxyExchange = Object.assign(x, { principal, agentId: match.agentId });
      return match.route === STREAM ? streamCall(call, deps) : transactCall(call, deps);
    });
    return true;
  };
}

/** The route and agent id of a hot-path request, or null (exact paths only, like the router). */
function routeOf(method: string, url: string): { route: string; agentId: string } | null {
  if (!url.startsWith(PREFIX)) return null;
  const q = url.indexOf("?");
  const rest = url.slice(PREFIX.length, q < 0 ? undefined : q);
  const slash = rest.indexOf("/");
  if (slash < 0) return method === "POST" && rest !== "" ? { route: TRANSACT, agentId: decoded(rest) } : null;
  if (slash === 0 || rest.slice(slash) !== "/stream") return null;
  if (method !== "POST" && method !== "GET" && method !== "DELETE") return null;
  return { route: STREAM, agentId: decoded(rest.slice(0, slash)) };
}

/** A path segment percent-decoded (a malformed escape is kept as sent: it names no agent). */
function decoded(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
