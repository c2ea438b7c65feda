import { randomBytes } from "node:crypto";
import { mintDevToken, READ_BODY_SCOPE } from "@gw/auth";
import type { Config } from "@gw/config";
import type { Runtime } from "@gw/runtime";
import { type DataDir, dataDirPath } from "./data-dir/index.ts";

/**
 * Every scope the gateway checks, which the token `pnpm start` (and `pnpm demo`) prints holds: it is
 * the operator's, and the console's screens need them (bodies of captured calls, deciding
 * approvals; docs/interface.md "Authentication"). A scope the code begins to check belongs here too.
 */
export const OPERATOR_SCOPES: readonly string[] = [READ_BODY_SCOPE, "approvals:decide", "audit:read"];

/** Where the dev signing secret came from: the environment, the data directory, or this process. */
export type DevSecretSource = "environment" | "kept" | "process";

/**
 * `pnpm start` with no token configuration: an HS256 secret generated once and kept in the data
 * directory (data-dir/), so the quick start needs no set-up, no secret is ever shipped in the
 * repository, printed tokens stay valid across restarts, and `pnpm dev-token` can mint tokens for
 * any tenant of the running gateway. With GW_DATA_DIR=memory it lives in this process only.
 * Undefined with GW_JWKS_URL: tokens come from the issuer.
 */
export function ensureDevAuth(
  env: Record<string, string | undefined>,
  data: DataDir | undefined,
): DevSecretSource | undefined {
  if (env.GW_JWKS_URL) return undefined;
  if (env.GW_DEV_JWT_SECRET) return "environment";
  if (data?.devSecret) {
    env.GW_DEV_JWT_SECRET = data.devSecret;
    return "kept";
  }
  env.GW_DEV_JWT_SECRET = randomBytes(32).toString("base64url");
  return "process";
}

/**
 * The command that mints another token for this gateway: `pnpm -s dev-token`, preceded by the
 * gateway's GW_DATA_DIR when it was given one (the command reads the default directory otherwise);
 * undefined when no other process can know the secret (generated for this process only).
 */
export function devTokenCommand(
  config: Pick<Config, "GW_DATA_DIR">,
  source: DevSecretSource | undefined,
): string | undefined {
  if (source === "environment") return "pnpm -s dev-token";
  const dir = dataDirPath({ GW_DATA_DIR: config.GW_DATA_DIR });
  if (source !== "kept" || !dir) return undefined;
  return config.GW_DATA_DIR ? `GW_DATA_DIR=${shellWord(dir)} pnpm -s dev-token` : "pnpm -s dev-token";
}

/** When no command can mint another token: how to make one possible. */
export const NO_TOKEN_COMMAND =
  "the dev secret lives in this process only (GW_DATA_DIR=memory): start with GW_DEV_JWT_SECRET set to mint other tokens with pnpm -s dev-token";

function shellWord(s: string): string {
  return /^[\w./@:=+-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

/** Which store, and where: the banner's words for it. */
export function storeWords(store: Pick<Runtime["store"], "kind" | "dataDir">): string {
  if (store.kind === "postgres") return "Postgres (DATABASE_URL)";
  return store.dataDir ? `embedded, on disk in ${store.dataDir}` : "embedded, in memory: lost when it stops";
}

/**
 * The banner `pnpm start` prints: a ready-to-paste curl with a dev token, on the port it listens
 * on (the one it was given, or the one the system chose for PORT=0), and where its data is kept.
 */
export async function devBanner(opts: {
  config: Config;
  store: Pick<Runtime["store"], "kind" | "dataDir">;
  port: number;
  data: DataDir | undefined;
  /** How to mint another token (devTokenCommand). */
  tokenCommand: string | undefined;
}): Promise<string> {
  const { config, store, port, data, tokenCommand } = opts;
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
    `  agent gateway listening on ${base}  (store: ${storeWords(store)})`,
    "",
    `  dev token (tenant 'dev', the operator: ${OPERATOR_SCOPES.join(", ")}; valid 12 h):`,
    `    export GW_TOKEN=${token}`,
    "",
    ...(data ? [`  kept in ${data.path} (GW_DATA_DIR): ${kept(data)}; the next start finds them again`] : []),
    ...(tokenCommand
      ? [
          "  a token for another tenant or user, with only the scopes you give it (none without --scope):",
          `    ${tokenCommand} --tenant T --sub U [--scope S ...] [--ttl SECONDS]   (--help says more)`,
        ]
      : [`  ${NO_TOKEN_COMMAND}`]),
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

/** What the data directory holds for this gateway, in words. */
function kept(data: DataDir): string {
  return [
    data.store ? "the store" : undefined,
    data.key ? "the credentials key" : undefined,
    data.devSecret ? "the dev token secret" : undefined,
  ]
    .filter(Boolean)
    .join(", ");
}
