import { DomainError } from "@gw/core";
import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";

/**
 * Other methods on the proxy paths → 405 with Allow, so MCP clients that probe for a standalone
 * SSE stream (GET) or end a session (DELETE) degrade gracefully instead of failing.
 */
export function registerMethodNotAllowed(app: Hono<AppEnv>) {
  const deny = (allow: string) => () => {
    throw new DomainError("method_not_allowed", `method not allowed; use ${allow}`, {
      headers: { Allow: allow },
    });
  };
  app.all("/v1/proxy/:id", deny("POST"));
  app.all("/v1/proxy/:id/stream", deny("POST"));
  app.all("/v1/proxy/:id/invocations/:invId", deny("GET"));
}
