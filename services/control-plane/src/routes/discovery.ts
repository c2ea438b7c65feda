import { isProtectedResourcePath, protectedResourceMetadata, RESOURCE_METADATA_PREFIX } from "@gw/auth";
import type { AppEnv } from "@gw/http";
import type { Context, Hono } from "hono";

/**
 * RFC 9728 protected-resource metadata of the proxy call paths (docs/api.md), mounted only when
 * GW_OAUTH_AUTHORIZATION_SERVERS is set. Built from configuration alone: no lookup, so the answer
 * is the same whether or not the agent exists; a malformed id is a 404.
 */
export function registerDiscovery(
  app: Hono<AppEnv>,
  opts: { publicUrl: string; authorizationServers: readonly string[] },
) {
  const serve = (c: Context<AppEnv>) => {
    const resourcePath = c.req.path.slice(RESOURCE_METADATA_PREFIX.length);
    if (!isProtectedResourcePath(resourcePath)) return c.json({ error: "not found" }, 404);
    c.header("Cache-Control", "public, max-age=3600");
    c.header("Access-Control-Allow-Origin", "*");
    return c.json(protectedResourceMetadata({ ...opts, resourcePath }));
  };
  app.get(`${RESOURCE_METADATA_PREFIX}/v1/proxy/:id`, serve);
  app.get(`${RESOURCE_METADATA_PREFIX}/v1/proxy/:id/stream`, serve);
}
