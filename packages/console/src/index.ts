import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/**
 * Where the built console lives: `packages/console/dist/console/` when running from source, and
 * `dist/console/` beside the bundled `dist/main.js` of a service image (infra/docker/bundle.mjs
 * builds it there). The same relative URL resolves to both, as the migrations' does.
 */
export const CONSOLE_DIR = fileURLToPath(new URL("../dist/console/", import.meta.url));

/**
 * The console's Content-Security-Policy: everything from this origin only, no inline script or
 * style, no framing, no form posts, no base-tag tricks. `img-src data:` is for the empty favicon.
 */
export const CONSOLE_CSP = consoleCsp(null);

/**
 * The CSP for a deployment: with sign-in through an identity provider, the page also fetches the
 * issuer's discovery document and token endpoint, so `connect-src` names the issuer's origin too
 * (and nothing else: an identity provider whose token endpoint is on another origin is refused by
 * the browser, and the sign-in screen says so).
 */
export function consoleCsp(oidc: ConsoleOidc | null): string {
  const connect = oidc ? `connect-src 'self' ${new URL(oidc.issuer).origin}` : "connect-src 'self'";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    connect,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * What the page needs to sign in with the organisation's identity provider, served unauthenticated
 * at `/console/config.json` (docs/console.md "Sign-in with the identity provider"). Nothing here is
 * secret: the client is a public one (PKCE, no client secret).
 */
export type ConsoleOidc = {
  issuer: string;
  client_id: string;
  /** `openid` first, then the configured scopes (no duplicates). */
  scopes: string[];
  /** GW_PUBLIC_URL + "/console/": where the identity provider sends the browser back. */
  redirect_uri: string;
};

/** The console's sign-in settings from the configuration; null when GW_OIDC_ISSUER is unset. */
export function consoleOidcOf(config: {
  publicUrl: string;
  GW_OIDC_ISSUER?: string | undefined;
  GW_OIDC_CLIENT_ID?: string | undefined;
  GW_OIDC_SCOPES: readonly string[];
}): ConsoleOidc | null {
  if (!config.GW_OIDC_ISSUER || !config.GW_OIDC_CLIENT_ID) return null;
  return {
    issuer: config.GW_OIDC_ISSUER,
    client_id: config.GW_OIDC_CLIENT_ID,
    scopes: [...new Set(["openid", ...config.GW_OIDC_SCOPES])],
    redirect_uri: `${config.publicUrl}/console/`,
  };
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

export type ConsoleAsset = {
  body: Buffer;
  /** Pre-compressed once at load: the bundle is ~100 KiB and compresses about 3×. */
  gzip: Buffer;
  type: string;
  etag: string;
  /** Content-hashed names never change content: cache them for a year. index.html revalidates. */
  immutable: boolean;
};

/**
 * Reads the built console into memory: index.html and the hashed files it names; null when it was
 * never built. A build running meanwhile (build.mjs) renames files into place and may prune assets
 * an older index.html named, so a named file that vanished means "read the new index.html": retry.
 */
export function loadConsoleAssets(dir: string = CONSOLE_DIR): Map<string, ConsoleAsset> | null {
  for (let attempt = 0; ; attempt++) {
    if (!existsSync(join(dir, "index.html"))) return null;
    try {
      return readBuild(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 4) throw e;
    }
  }
}

function readBuild(dir: string): Map<string, ConsoleAsset> {
  const index = readFileSync(join(dir, "index.html"));
  const named = [...index.toString("utf8").matchAll(/\/console\/([\w.-]+)"/g)].map((m) => m[1] ?? "");
  const assets = new Map<string, ConsoleAsset>();
  for (const name of ["index.html", ...named]) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = name === "index.html" ? index : readFileSync(join(dir, name));
    assets.set(name, {
      body,
      gzip: gzipSync(body, { level: 9 }),
      type,
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
      immutable: name !== "index.html",
    });
  }
  return assets;
}
