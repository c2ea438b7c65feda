import { ruleOf } from "@gw/core";
import * as v from "valibot";
import {
  actorUri,
  bool,
  cidrList,
  executablePath,
  int,
  kmsKey,
  num,
  oidcIssuer,
  optStr,
  originList,
  receiptKey,
  scopeList,
  url,
  urlList,
} from "./rules.ts";

/** Thrown for a bad environment; its message is the one line the process prints before exiting. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * The whole environment of every service, in one commented schema. Defaults are the README's Configuration table.
 * Nothing else in the code base reads process.env.
 */
const EnvSchema = v.object({
  /** HTTP port; the default depends on the service (see loadConfig). */
  PORT: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, "must be a port number"))),
  /** Base URL callers use; the x402 `resource` is built from it. */
  GW_PUBLIC_URL: url(["http:", "https:"]),
  /** Postgres URL; unset → the embedded store (PGlite), in GW_DATA_DIR or in memory. */
  DATABASE_URL: url(["postgres:", "postgresql:"]),
  /**
   * Where `pnpm start` keeps what it makes itself (docs/operations.md, The embedded store on disk):
   * the embedded store when DATABASE_URL is unset, and the development secrets it generates (the
   * credentials key without GW_KMS_KEY, the dev token secret without token configuration), each in
   * a file of mode 0600. `memory` keeps nothing: the store in memory, the secrets in the process.
   * Unset → `.gateway/data` under the working directory. Read by the all-in-one gateway only.
   */
  GW_DATA_DIR: optStr(),
  /** Redis URL for BullMQ and rate limits; unset → in-process queue and limiter. */
  REDIS_URL: url(["redis:", "rediss:"]),
  /** JWKS endpoint of the token issuer. */
  GW_JWKS_URL: url(["http:", "https:"]),
  GW_JWT_ISSUER: optStr(),
  GW_JWT_AUDIENCE: optStr(),
  GW_JWT_TENANT_CLAIM: v.optional(v.pipe(v.string(), v.minLength(1)), "tenant_id"),
  /** A token without `exp` would never expire; `false` accepts such tokens (docs/security.md). */
  GW_JWT_REQUIRE_EXP: bool(true),
  /** Dev-only HS256 secret; used only when GW_JWKS_URL is unset. */
  GW_DEV_JWT_SECRET: v.optional(v.pipe(v.string(), v.minLength(32, "must be at least 32 characters"))),
  /**
   * Signs the `Mcp-Session-Id` a virtual MCP server issues to clients of older revisions (docs/mcp.md,
   * Older revisions); the same on every replica. Unset → derived from GW_KMS_KEY, else a fixed
   * development key.
   */
  GW_MCP_SESSION_SECRET: v.optional(v.pipe(v.string(), v.minLength(32, "must be at least 32 characters"))),
  /** base64 32-byte key-encryption key for credentials; unset → ephemeral key. */
  GW_KMS_KEY: kmsKey,
  /** Verifier program; set → verified-action mode (docs/verifier.md). */
  GW_VERIFIER_BINARY: executablePath,
  /** Ed25519 private JWK that signs receipts; with GW_RECEIPT_ACTOR → the emitter is attached. */
  GW_RECEIPT_SIGNING_KEY: receiptKey,
  /** Actor URI receipts are signed as; required with GW_RECEIPT_SIGNING_KEY (and only with it). */
  GW_RECEIPT_ACTOR: actorUri,
  /** How long a tenant's policy may be served from a process's cache (writes elsewhere: ≤ this). */
  GW_POLICY_CACHE_MS: int(1_000, 0, 60_000),
  /** How long an approved call may be repeated to pass its require_approval rule once (docs/policy.md). */
  GW_APPROVAL_TTL_SECONDS: int(900, 1, 604_800),
  GW_SETTLE_THEN_FORWARD: bool(true),
  /** Time-out of one facilitator `/settle` attempt; a time-out is final (docs/payments.md, Settle-then-forward). */
  GW_SETTLE_TIMEOUT_MS: int(15_000, 1, 600_000),
  GW_SSRF_ALLOW_CIDRS: cidrList,
  /**
   * OAuth authorization servers (issuer URLs) announced in the proxy paths' protected-resource
   * metadata (RFC 9728, docs/api.md). Empty: no metadata route, 401s carry a plain Bearer challenge.
   */
  GW_OAUTH_AUTHORIZATION_SERVERS: urlList,
  /**
   * Origins, besides GW_PUBLIC_URL's, whose browsers may call MCP agents: a request to one with
   * another `Origin` is refused 403 (DNS rebinding, docs/security.md, Origin check).
   */
  GW_ALLOWED_ORIGINS: originList,
  GW_ALLOW_HTTP_UPSTREAMS: bool(false),
  /**
   * Console sign-in with the organisation's identity provider (docs/console.md): the issuer, a
   * public client registered there, and scopes requested besides `openid`. Set together with
   * GW_JWKS_URL: the tokens the console obtains are verified like any other.
   */
  GW_OIDC_ISSUER: oidcIssuer,
  GW_OIDC_CLIENT_ID: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^[\x21-\x7e]{1,255}$/, "must be 1 to 255 printable characters without spaces"),
    ),
  ),
  GW_OIDC_SCOPES: scopeList,
  /** PEM bundle trusted for upstream TLS in addition to the system store (private CAs). */
  GW_UPSTREAM_CA_FILE: optStr(),
  GW_RATE_LIMIT_RPS: num(10, 0.001),
  GW_RATE_LIMIT_BURST: int(20, 1, 1_000_000),
  /** Calls in flight per agent per proxy replica (an agent's `max_concurrency` overrides it). */
  GW_AGENT_MAX_CONCURRENCY: int(64, 1, 1_000_000),
  /** Calls in flight per tenant per proxy replica. */
  GW_TENANT_MAX_CONCURRENCY: int(256, 1, 1_000_000),
  /** `off` unmounts the credential routes (404) and reports it in capabilities. */
  GW_CREDENTIALS: v.optional(v.picklist(["on", "off"], "must be on or off"), "on"),
  GW_CONNECT_TIMEOUT_MS: int(10_000, 1, 600_000),
  GW_TRANSACT_TIMEOUT_MS: int(60_000, 1, 3_600_000),
  GW_STREAM_FIRST_BYTE_TIMEOUT_MS: int(60_000, 1, 3_600_000),
  GW_STREAM_IDLE_TIMEOUT_MS: int(300_000, 1, 3_600_000),
  /** Retries of transient upstream failures (connection errors, 502/503/504). */
  GW_UPSTREAM_RETRIES: int(2, 0, 10),
  GW_RETRY_BASE_MS: int(100, 1, 60_000),
  /** How long a transactional result (status, headers, body) is kept for polling. */
  GW_RESULT_TTL_SECONDS: int(86_400, 1, 30 * 86_400),
  GW_WORKER_CONCURRENCY: int(64, 1, 10_000),
  /**
   * The worker process's nice value (0–19; it only ever lowers its own priority): where it shares
   * cores with a proxy, the callers waiting on the proxy come first and the calls already answered
   * 202 wait (docs/performance.md). No effect on a host of its own.
   */
  GW_WORKER_NICE: int(10, 0, 19),
  /**
   * How many proxy processes serve the proxy's port (node:cluster; default 1). A proxy saturates
   * one core on its own: more processes let it use more. Each is a replica of its own: caches,
   * store pools and the in-flight limits are per process (docs/performance.md).
   */
  GW_PROXY_PROCESSES: int(1, 1, 64),
  /**
   * For the bench only (docs/performance.md, "Where the 202's tail goes"): a file the proxy appends
   * each 202's timeline to (arrival, authentication, the pending row's insert and commit, the
   * enqueue, the answer). Unset (the default): nothing is timed or written. Read once at start-up.
   */
  GW_PROXY_TIMELINE: optStr(),
  /**
   * false (default): streaming records and every completion update commit without waiting for the
   * WAL flush — a Postgres crash may lose the last few hundred ms of them, never corrupt them. A
   * transactional call's pending record is always durable before its 202. true: everything waits.
   */
  GW_RECORDS_SYNC_COMMIT: bool(false),
  /** How long a worker's lock on a job lasts; a dead worker's job is redelivered after about this long. */
  GW_JOB_LOCK_MS: int(30_000, 500, 600_000),
  /**
   * How often each worker runs the reconciler and sweeper (docs/reliability.md): pending rows
   * whose job was lost are re-enqueued, abandoned running rows ended or re-run.
   */
  GW_RECONCILE_MS: int(5_000, 100, 60_000),
  /** BullMQ queue of transactional jobs (tests give each deployment its own). */
  GW_QUEUE_NAME: v.optional(
    v.pipe(v.string(), v.regex(/^[\w-]{1,64}$/, "must be letters, digits, - or _")),
    "gw-transact",
  ),
  /** How long an agent row may be served from the proxy's cache. */
  GW_AGENT_CACHE_MS: int(1_000, 0, 60_000),
  /**
   * A streaming call that ends within this many ms is recorded by one INSERT of its final state;
   * a longer one gets a `running` row at this point, completed when it ends (ADR 0006).
   */
  GW_STREAM_RECORD_DEFER_MS: int(500, 0, 60_000),
  GW_SHUTDOWN_TIMEOUT_MS: int(25_000, 0, 600_000),
  GW_LOG_LEVEL: v.optional(
    v.picklist(
      ["trace", "debug", "info", "warn", "error", "fatal", "silent"],
      "must be one of trace, debug, info, warn, error, fatal, silent",
    ),
    "info",
  ),
  GW_VERSION: v.optional(v.string(), "0.1.0"),
  GW_COMMIT: v.optional(v.string(), "dev"),
  OTEL_EXPORTER_OTLP_ENDPOINT: url(["http:", "https:"]),
  OTEL_SERVICE_NAME: optStr(),
  /** Milliseconds between two metric exports (the standard OTel variable). */
  OTEL_METRIC_EXPORT_INTERVAL: int(60_000, 100, 3_600_000),
  /**
   * Adds `tenant_id` to the per-call metrics (docs/operations.md). Off by default: every tenant
   * multiplies the number of series.
   */
  GW_METRICS_TENANT_LABELS: bool(false),
});

type Env = v.InferOutput<typeof EnvSchema>;

export type Config = Readonly<
  Omit<Env, "PORT"> & {
    port: number;
    publicUrl: string;
    /**
     * The origins an `Origin` header of a call to an MCP agent may name: GW_PUBLIC_URL's and
     * GW_ALLOWED_ORIGINS, normalised (see `normalOrigin`), computed once at start-up.
     */
    allowedOrigins: ReadonlySet<string>;
  }
>;

/**
 * A copy of this process's environment: the one read of `process.env` in the code base. A service
 * or command line tool passes it to `loadConfig`; one that adjusts the environment before parsing
 * it (`pnpm demo` allows its own local upstreams) adjusts this copy.
 */
export function processEnv(): Record<string, string | undefined> {
  return { ...process.env };
}

/** Parse and validate the environment once; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined>, opts: { defaultPort: number }): Config {
  const source: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.entries)) {
    const value = env[key];
    if (value !== undefined && value !== "") source[key] = value;
  }
  // `ruleOf`: valibot's own text quotes the value, and a variable may hold a secret.
  const result = v.safeParse(EnvSchema, source, { abortPipeEarly: true, message: ruleOf });
  if (!result.success) {
    const issue = result.issues[0];
    const key = issue.path?.[0]?.key;
    throw new ConfigError(`invalid configuration: ${String(key ?? "environment")} ${issue.message}`);
  }
  const parsed = result.output;
  if ((parsed.GW_RECEIPT_SIGNING_KEY === undefined) !== (parsed.GW_RECEIPT_ACTOR === undefined)) {
    throw new ConfigError(
      "invalid configuration: GW_RECEIPT_SIGNING_KEY and GW_RECEIPT_ACTOR must be set together",
    );
  }
  checkOidc(parsed);
  const port = parsed.PORT === undefined ? opts.defaultPort : Number(parsed.PORT);
  if (port < 0 || port > 65535) throw new ConfigError("invalid configuration: PORT must be a port number");
  const { PORT: _port, ...rest } = parsed;
  const publicUrl = (parsed.GW_PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, "");
  return Object.freeze({
    ...rest,
    port,
    publicUrl,
    allowedOrigins: new Set([new URL(publicUrl).origin, ...parsed.GW_ALLOWED_ORIGINS]),
  });
}

/** The console's OIDC settings go together, and need a JWKS to verify what the issuer signs. */
function checkOidc(parsed: Env) {
  const issuer = parsed.GW_OIDC_ISSUER;
  const client = parsed.GW_OIDC_CLIENT_ID;
  if ((issuer === undefined) !== (client === undefined)) {
    throw new ConfigError("invalid configuration: GW_OIDC_ISSUER and GW_OIDC_CLIENT_ID must be set together");
  }
  if (issuer === undefined && parsed.GW_OIDC_SCOPES.length > 0) {
    throw new ConfigError("invalid configuration: GW_OIDC_SCOPES needs GW_OIDC_ISSUER and GW_OIDC_CLIENT_ID");
  }
  if (issuer !== undefined && parsed.GW_JWKS_URL === undefined) {
    throw new ConfigError(
      "invalid configuration: GW_OIDC_ISSUER needs GW_JWKS_URL (the issuer's JWKS, so the gateway accepts the tokens it signs)",
    );
  }
}
