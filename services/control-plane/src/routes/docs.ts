import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AppEnv } from "@gw/http";
import type { Context, Hono } from "hono";
import swaggerUiDir from "swagger-ui-dist/absolute-path.js";

/** Only self: the page, its script and its styles all come from this origin (data: for icons). */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent gateway API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// No inline script (CSP), no validator badge (it would call another origin), the document from here.
const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  tryItOutEnabled: false,
  persistAuthorization: false,
});
`;

type Asset = { body: Buffer | string; type: string };

/**
 * GET /docs: the API reference rendered by Swagger UI, whose files come from the swagger-ui-dist
 * dependency and are served by the gateway itself: no request leaves for another origin.
 */
export function registerDocs(app: Hono<AppEnv>) {
  let assets: Map<string, Asset> | undefined;
  const load = () => {
    if (assets) return assets;
    const dir = swaggerUiDir();
    assets = new Map<string, Asset>([
      [
        "swagger-ui.css",
        { body: readFileSync(join(dir, "swagger-ui.css")), type: "text/css; charset=utf-8" },
      ],
      [
        "swagger-ui-bundle.js",
        { body: readFileSync(join(dir, "swagger-ui-bundle.js")), type: "text/javascript; charset=utf-8" },
      ],
      ["init.js", { body: INIT, type: "text/javascript; charset=utf-8" }],
    ]);
    return assets;
  };
  const send = (c: Context<AppEnv>, asset: Asset) => {
    securityHeaders(c);
    c.header("Content-Type", asset.type);
    c.header("Cache-Control", "public, max-age=3600");
    return c.body(typeof asset.body === "string" ? asset.body : new Uint8Array(asset.body), 200);
  };
  app.get("/docs", (c) => send(c, { body: PAGE, type: "text/html; charset=utf-8" }));
  app.get("/docs/:file", (c) => {
    const asset = load().get(c.req.param("file"));
    if (!asset) return c.json({ error: "not found" }, 404);
    return send(c, asset);
  });
}

function securityHeaders(c: Context<AppEnv>) {
  c.header("Content-Security-Policy", DOCS_CSP);
  c.header("X-Content-Type-Options", "nosniff");
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "no-referrer");
  c.header("Cross-Origin-Resource-Policy", "same-origin");
}
