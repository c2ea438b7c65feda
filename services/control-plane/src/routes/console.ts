import { type ConsoleAsset, type ConsoleOidc, consoleCsp, loadConsoleAssets } from "@gw/console";
import type { AppEnv } from "@gw/http";
import type { Context, Hono } from "hono";

const FILE_RE = /^[\w.-]{1,128}$/;

/**
 * The operator console (docs/console.md): static files, no token needed to fetch them; the page
 * calls the API with the token the operator pastes or obtains from the identity provider. Assets
 * are read once, on the first request, so processes that never serve the console never pay for it.
 * `config.json` tells the page how to sign in (`{oidc: null}` without an identity provider).
 */
export function registerConsole(app: Hono<AppEnv>, opts: { dir?: string; oidc?: ConsoleOidc | null } = {}) {
  const oidc = opts.oidc ?? null;
  const csp = consoleCsp(oidc);
  const settings = JSON.stringify({ oidc });
  let assets: Map<string, ConsoleAsset> | null | undefined;
  const load = () => {
    if (assets === undefined) assets = loadConsoleAssets(opts.dir);
    return assets;
  };

  const serve = (c: Context<AppEnv>, name: string) => {
    const all = load();
    securityHeaders(c, csp);
    if (!all) {
      c.var.log.warn("console requested but not built: run `pnpm --filter @gw/console build`");
      return c.json({ error: "console is not built on this deployment" }, 503);
    }
    const asset = FILE_RE.test(name) ? all.get(name) : undefined;
    if (!asset) return c.json({ error: "not found" }, 404);
    c.header("Cache-Control", asset.immutable ? "public, max-age=31536000, immutable" : "no-cache");
    c.header("ETag", asset.etag);
    c.header("Vary", "Accept-Encoding");
    c.header("Content-Type", asset.type);
    if (c.req.header("if-none-match") === asset.etag) return c.body(null, 304);
    if (/\bgzip\b/.test(c.req.header("accept-encoding") ?? "")) {
      c.header("Content-Encoding", "gzip");
      return c.body(new Uint8Array(asset.gzip), 200);
    }
    return c.body(new Uint8Array(asset.body), 200);
  };

  app.get("/console", (c) => serve(c, "index.html"));
  app.get("/console/", (c) => serve(c, "index.html"));
  // Before `/console/:file`: not a built file, and answered even when the console is not built.
  app.get("/console/config.json", (c) => {
    securityHeaders(c, csp);
    c.header("Cache-Control", "no-cache");
    c.header("Content-Type", "application/json; charset=utf-8");
    return c.body(settings, 200);
  });
  app.get("/console/:file", (c) => serve(c, c.req.param("file")));
}

function securityHeaders(c: Context<AppEnv>, csp: string) {
  c.header("Content-Security-Policy", csp);
  c.header("X-Content-Type-Options", "nosniff");
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "no-referrer");
  c.header("Cross-Origin-Opener-Policy", "same-origin");
  c.header("Cross-Origin-Resource-Policy", "same-origin");
}
