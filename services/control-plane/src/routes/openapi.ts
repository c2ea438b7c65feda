import type { AppEnv } from "@gw/http";
import { buildOpenApiDocument, type DocumentOptions } from "@gw/openapi";
import type { Hono } from "hono";

/**
 * GET /openapi.json (no auth): the document of exactly what this deployment mounts, built once
 * from the valibot schemas the routes validate and answer with (docs/api.md).
 */
export function registerOpenApi(app: Hono<AppEnv>, opts: DocumentOptions) {
  let body: string | undefined;
  app.get("/openapi.json", (c) => {
    body ??= JSON.stringify(buildOpenApiDocument(opts));
    c.header("Cache-Control", "no-cache");
    c.header("Access-Control-Allow-Origin", "*");
    return c.body(body, 200, { "Content-Type": "application/json; charset=utf-8" });
  });
}
