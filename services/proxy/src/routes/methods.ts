import { DomainError } from "@gw/core";
import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";

/**
 * Other methods on the two paths served outside the router (direct.ts) → 405 with Allow: the
 * router does not know them, so the base app's 405 (which covers the poll) cannot. The streaming
 * path also takes GET and DELETE for MCP agents (routes/stream.ts decides per agent).
 */
export function registerMethodNotAllowed(app: Hono<AppEnv>) {
  const deny = (allow: string) => () => {
    throw new DomainError("method_not_allowed", `method not allowed; use ${allow}`, {
      headers: { Allow: allow },
    });
  };
  app.all("/v1/proxy/:id", deny("POST"));
  app.all("/v1/proxy/:id/stream", deny("POST, GET, DELETE"));
}
