import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import { createTokenVerifier, type TokenVerifier } from "@gw/auth";
import type { Config } from "@gw/config";
import { migrate, openStore, type Store, storeWarnings } from "@gw/db";
import { createInvocationLifecycle, type Lifecycle, startHeartbeat } from "@gw/invocations";
import {
  bullmqConsumer,
  bullmqQueue,
  type CallRef,
  type JobConsumer,
  type JobQueue,
  memoryQueue,
  type ProcessCall,
} from "@gw/queue";
import { createQuotas, createRateLimiter, type Quotas, type RateLimiter } from "@gw/ratelimit";
import {
  agentWantsReceipts,
  createReceiptEmitter,
  loadReceiptKey,
  type ReceiptEmitter,
  storeSink,
} from "@gw/receipts";
import { createLogger, type DestinationStream, type Logger } from "@gw/telemetry";
import { createUpstreamDispatcher, type SsrfPolicy, ssrfPolicy } from "@gw/upstream";
import { createKeyring, createOAuthClient, type Keyring, type OAuthClient } from "@gw/vault";
import { Redis } from "ioredis";
import type { Agent } from "undici";
import { type ChangeBus, createChangeBus } from "./changes.ts";
import { type Features, featuresOf } from "./features.ts";

/** What every service is built from: configuration plus the live connections it implies. */
export type Runtime = {
  config: Config;
  logger: Logger;
  store: Store;
  verifyToken: TokenVerifier;
  ssrf: { policy: SsrfPolicy; allowHttp: boolean };
  /**
   * The credentials key-encryption key, one per process: GW_KMS_KEY; else the key the all-in-one
   * gateway keeps in its data directory (`keptKey`); else an ephemeral one.
   */
  keyring: Keyring;
  /** Present when REDIS_URL is set. */
  redis: Redis | undefined;
  /** Makes a fresh Redis connection (BullMQ workers need their own); undefined without Redis. */
  newRedis: (() => Redis) | undefined;
  /** Per-(tenant, agent) token buckets: shared through Redis when present, else in this process. */
  rateLimiter: RateLimiter;
  /** Counters of policy `limit` rules: shared in Redis, or in this process (docs/policy.md "Quotas"). */
  quotas: Quotas;
  /** The one dispatcher every upstream call goes through (SSRF guard, pools, time-outs). */
  dispatcher: Agent;
  /**
   * OAuth credentials' access tokens, cached in this process and shared by every service in it
   * (token requests go through `dispatcher`). A write to a credential drops its tokens.
   */
  oauth: OAuthClient;
  /** Transactional jobs: BullMQ on Redis, or in-process without it. */
  jobs: {
    queue: JobQueue;
    consume: (process: ProcessCall, onLost: (call: CallRef) => Promise<boolean>) => JobConsumer;
  };
  /** Which optional parts this deployment runs: decided once, read by every service. */
  features: Features;
  /** Invalidation of cached catalog state: same process at once, other replicas within ~1 s. */
  changes: ChangeBus;
  /** The one invocation lifecycle (open, claim, complete, fail) every service writes through. */
  invocations: Lifecycle;
  /** This process (gw_instances heartbeat): owner of the streaming records it opens. */
  instanceId: string;
  /**
   * Signed receipts: present when GW_RECEIPT_SIGNING_KEY and GW_RECEIPT_ACTOR are set. Fail-open:
   * its methods never throw and never wait. Terminal invocations reach it through the lifecycle.
   */
  receipts: ReceiptEmitter | undefined;
  close: () => Promise<void>;
};

/** What the all-in-one gateway brings from its data directory (GW_DATA_DIR) besides the config. */
export type Kept = {
  /** The data directory itself when the store is embedded: the store opens on disk there. */
  storeDir?: string;
  /** The key-encryption key kept in `file`, used when GW_KMS_KEY is unset. */
  key?: { kek: Buffer; file: string };
};

export async function createRuntime(
  config: Config,
  opts: { service: string; logStream?: DestinationStream; migrate?: boolean; kept?: Kept },
): Promise<Runtime> {
  const logger = createLogger({
    level: config.GW_LOG_LEVEL,
    service: opts.service,
    ...(opts.logStream ? { stream: opts.logStream } : {}),
  });
  const store = await openStore(config.DATABASE_URL, {
    syncRecords: config.GW_RECORDS_SYNC_COMMIT,
    ...(opts.kept?.storeDir ? { dataDir: opts.kept.storeDir } : {}),
  });
  const closers: Array<() => Promise<unknown>> = [() => store.close()];
  try {
    if (opts.migrate !== false) {
      const { applied } = await migrate(store);
      if (applied.length) logger.info({ applied }, "migrations applied");
      // Said once per deployment, by the service that migrates.
      for (const warning of await storeWarnings(store)) logger.warn(warning);
    }
    const newRedis = config.REDIS_URL
      ? () =>
          new Redis(config.REDIS_URL as string, { maxRetriesPerRequest: null, enableAutoPipelining: true })
      : undefined;
    const redis = newRedis?.();
    // quit() waits for Redis to answer; one that never connected is simply disconnected.
    if (redis) closers.push(async () => (redis.status === "ready" ? redis.quit() : redis.disconnect()));
    const policy = ssrfPolicy(config.GW_SSRF_ALLOW_CIDRS);
    const dispatcher = createUpstreamDispatcher({
      policy,
      connectTimeoutMs: config.GW_CONNECT_TIMEOUT_MS,
      ...(config.GW_UPSTREAM_CA_FILE
        ? { ca: [...rootCertificates, readFileSync(config.GW_UPSTREAM_CA_FILE, "utf8")] }
        : {}),
    });
    closers.push(() => dispatcher.close());
    const jobs = createJobs(config, logger, redis, newRedis);
    closers.push(() => jobs.queue.close());
    const kept = config.GW_KMS_KEY ? undefined : opts.kept?.key;
    const keyring = createKeyring(config.GW_KMS_KEY ?? kept?.kek);
    if (kept) {
      logger.warn(
        `GW_KMS_KEY is not set: credentials are sealed under the development key kept in ${kept.file}, beside the data it protects; set GW_KMS_KEY for anything but development`,
      );
    } else if (keyring.ephemeral) {
      logger.warn(
        "GW_KMS_KEY is not set: credentials are sealed under an ephemeral key of this process; they will not decrypt after a restart or in any other process",
      );
    }
    const changes = await createChangeBus(store, logger);
    closers.push(() => changes.close());
    const oauth = createOAuthClient({ dispatcher, allowHttp: config.GW_ALLOW_HTTP_UPSTREAMS });
    // A rotation already misses (tokens are keyed by version); this frees them, and a delete's.
    changes.subscribe((change) => {
      if (change.kind === "credential") oauth.forget(change.tenantId, change.id);
    });
    const instanceId = `${opts.service}-${randomUUID()}`;
    closers.push(startHeartbeat(store, instanceId, opts.service));
    const receipts =
      config.GW_RECEIPT_SIGNING_KEY && config.GW_RECEIPT_ACTOR
        ? createReceiptEmitter({
            key: await loadReceiptKey(config.GW_RECEIPT_SIGNING_KEY),
            actor: config.GW_RECEIPT_ACTOR,
            sink: storeSink(store.db),
            wants: agentWantsReceipts(store.db),
            logger,
          })
        : undefined;
    // Runs before the store closes (closers run in reverse): queued receipts get a bounded chance.
    if (receipts) closers.push(() => receipts.drain(5_000));
    const runtime: Runtime = {
      config,
      logger,
      store,
      features: featuresOf(config),
      changes,
      invocations: createInvocationLifecycle({
        store,
        // Read through the runtime, not captured: tests swap in a faulty emitter. Without an
        // emitter no terminal event is built (docs/performance.md, Streaming: allocation per call).
        hears: () => runtime.receipts !== undefined,
        onTerminal: (e) =>
          runtime.receipts?.invocation({
            tenantId: e.tenantId,
            invocationId: e.id,
            agentId: e.agentId,
            status: e.status,
            digests: e.digests,
            settlement: e.settlement,
            binding: e.binding,
          }),
      }),
      instanceId,
      verifyToken: createTokenVerifier({
        jwksUrl: config.GW_JWKS_URL,
        issuer: config.GW_JWT_ISSUER,
        audience: config.GW_JWT_AUDIENCE,
        tenantClaim: config.GW_JWT_TENANT_CLAIM,
        requireExp: config.GW_JWT_REQUIRE_EXP,
        devSecret: config.GW_DEV_JWT_SECRET,
      }),
      ssrf: { policy, allowHttp: config.GW_ALLOW_HTTP_UPSTREAMS },
      keyring,
      redis,
      newRedis,
      rateLimiter: createRateLimiter({ redis, logger }),
      quotas: createQuotas({ redis, logger }),
      dispatcher,
      oauth,
      jobs,
      receipts,
      close: async () => {
        for (const close of closers.reverse()) await close().catch(() => {});
      },
    };
    return runtime;
  } catch (e) {
    await store.close().catch(() => {});
    throw e;
  }
}

function createJobs(
  config: Config,
  logger: Logger,
  redis: Redis | undefined,
  newRedis: (() => Redis) | undefined,
) {
  if (redis && newRedis) {
    const name = config.GW_QUEUE_NAME;
    return {
      queue: bullmqQueue({ name, connection: redis }),
      consume: (process: ProcessCall, onLost: (call: CallRef) => Promise<boolean>): JobConsumer => {
        const connection = newRedis();
        const consumer = bullmqConsumer({
          name,
          connection,
          concurrency: config.GW_WORKER_CONCURRENCY,
          lockMs: config.GW_JOB_LOCK_MS,
          logger,
          process,
          onLost,
        });
        return {
          close: async () => {
            await consumer.close();
            await (connection.status === "ready"
              ? connection.quit()
              : Promise.resolve(connection.disconnect())
            ).catch(() => {});
          },
        };
      },
    };
  }
  const mem = memoryQueue({ concurrency: config.GW_WORKER_CONCURRENCY, logger });
  return { queue: mem.queue, consume: mem.consume };
}
