import { mintDevToken, READ_BODY_SCOPE } from "@gw/auth";
import type { Config } from "@gw/config";
import { devFilePath, loadOrCreateDevSecret } from "./dev-file.ts";

/**
 * Every scope the gateway checks, which the token `pnpm start` (and `pnpm demo`) prints holds: it is
 * the operator's, and the console's screens need them (bodies of captured calls, deciding
 * approvals; docs/interface.md "Authentication"). A scope the code begins to check belongs here too.
 */
export const OPERATOR_SCOPES: readonly string[] = [READ_BODY_SCOPE, "approvals:decide", "audit:read"];

/**
 * `pnpm start` with no token configuration: an HS256 secret generated once and kept in the
 * git-ignored dev file (dev-file.ts), so the quick start needs no set-up, no secret is ever shipped
 * in the repository, and `pnpm dev-token` can mint tokens for any tenant of the running gateway.
 */
export function ensureDevAuth(env: Record<string, string | undefined>): {
  generated: boolean;
  file?: string;
} {
  if (env.GW_JWKS_URL || env.GW_DEV_JWT_SECRET) return { generated: false };
  const file = devFilePath(env.GW_DEV_FILE);
  env.GW_DEV_JWT_SECRET = loadOrCreateDevSecret(file).secret;
  return { generated: true, file };
}

/**
 * The command that mints another token for this gateway: `pnpm -s dev-token`, preceded by the
 * gateway's GW_DEV_FILE when it was given one (the command reads the default file otherwise).
 */
export function devTokenCommand(config: Pick<Config, "GW_DEV_FILE">): string {
  const file = config.GW_DEV_FILE;
  return file ? `GW_DEV_FILE=${shellWord(file)} pnpm -s dev-token` : "pnpm -s dev-token";
}

function shellWord(s: string): string {
  return /^[\w./@:=+-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

/**
 * The banner `pnpm start` prints: a ready-to-paste curl with a dev token, on the port it listens
 * on (the one it was given, or the one the system chose for PORT=0).
 */
export async function devBanner(config: Config, port: number, devFile?: string): Promise<string> {
  if (!config.GW_DEV_JWT_SECRET || config.GW_JWKS_URL) return "";
  const token = await mintDevToken(config.GW_DEV_JWT_SECRET, {
    tenant: "dev",
    sub: "dev-user",
    scopes: [...OPERATOR_SCOPES],
    ttlSeconds: 12 * 3600,
  });
  const base = `http://localhost:${port}`;
  return [
    "",
    `  agent gateway listening on ${base}  (store: ${config.store})`,
    "",
    `  dev token (tenant 'dev', the operator: ${OPERATOR_SCOPES.join(", ")}; valid 12 h):`,
    `    export GW_TOKEN=${token}`,
    "",
    ...(devFile ? [`  dev secret kept in ${devFile} (the next start reuses it)`] : []),
    "  a token for another tenant or user, with only the scopes you give it (none without --scope):",
    `    ${devTokenCommand(config)} --tenant T --sub U [--scope S ...] [--ttl SECONDS]   (--help says more)`,
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
