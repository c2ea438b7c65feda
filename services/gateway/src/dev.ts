import { mintDevToken } from "@gw/auth";
import type { Config } from "@gw/config";
import { devFilePath, loadOrCreateDevSecret } from "./dev-file.ts";

/**
 * `pnpm start` with no token configuration: an HS256 secret generated once and kept in the
 * git-ignored dev file (dev-file.ts), so the quick start needs no set-up, no secret is ever shipped
 * in the repository, and `pnpm token` can mint tokens for any tenant of the running gateway.
 */
export function ensureDevAuth(env: Record<string, string | undefined>): {
  generated: boolean;
  file?: string;
} {
  if (env.GW_JWKS_URL || env.GW_DEV_JWT_SECRET) return { generated: false };
  const file = devFilePath(env);
  env.GW_DEV_JWT_SECRET = loadOrCreateDevSecret(file).secret;
  return { generated: true, file };
}

/** The banner `pnpm start` prints: a ready-to-paste curl with a dev token. */
export async function devBanner(config: Config, devFile?: string): Promise<string> {
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
    ...(devFile
      ? [
          `  dev secret kept in ${devFile}; a token for another tenant or user:`,
          "    pnpm -s token --tenant T --sub U [--scope S] [--ttl SECONDS]",
          "",
        ]
      : []),
    `  operator console: ${base}/console  (paste the token above)`,
    "",
    "  try it:",
    `    curl -s ${base}/v1/me -H "Authorization: Bearer $GW_TOKEN"`,
    `    curl -s ${base}/v1/agents -H "Authorization: Bearer $GW_TOKEN" -H 'content-type: application/json' \\`,
    `      -d '{"name":"echo","upstream_url":"https://example.com/"}'`,
    "",
  ].join("\n");
}
