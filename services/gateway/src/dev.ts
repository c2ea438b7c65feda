import { randomBytes } from "node:crypto";
import { mintDevToken } from "@gw/auth";
import type { Config } from "@gw/config";

/**
 * `pnpm start` with no token configuration: a fresh HS256 secret for this process only, so the
 * quick start needs no set-up and no secret is ever shipped in the repository.
 */
export function ensureDevAuth(env: Record<string, string | undefined>): { generated: boolean } {
  if (env.GW_JWKS_URL || env.GW_DEV_JWT_SECRET) return { generated: false };
  env.GW_DEV_JWT_SECRET = randomBytes(32).toString("base64url");
  return { generated: true };
}

/** The banner `pnpm start` prints: a ready-to-paste curl with a dev token. */
export async function devBanner(config: Config): Promise<string> {
  if (!config.GW_DEV_JWT_SECRET || config.GW_JWKS_URL) return "";
  const token = await mintDevToken(config.GW_DEV_JWT_SECRET, {
    tenant: "dev",
    sub: "dev-user",
    scopes: ["invocations:read_body"],
    ttlSeconds: 12 * 3600,
  });
  const base = `http://localhost:${config.port}`;
  return [
    "",
    `  agent gateway listening on ${base}  (store: ${config.store})`,
    "",
    "  dev token (tenant 'dev', valid 12 h):",
    `    export GW_TOKEN=${token}`,
    "",
    `  operator console: ${base}/console  (paste the token above)`,
    "",
    "  try it:",
    `    curl -s ${base}/v1/me -H "Authorization: Bearer $GW_TOKEN"`,
    `    curl -s ${base}/v1/agents -H "Authorization: Bearer $GW_TOKEN" -H 'content-type: application/json' \\`,
    `      -d '{"name":"echo","upstream_url":"https://example.com/"}'`,
    "",
  ].join("\n");
}
