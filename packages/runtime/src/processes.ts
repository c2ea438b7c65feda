import cluster, { type Worker } from "node:cluster";
import { ConfigError, loadConfig, processEnv } from "@gw/config";
import { createLogger, type Logger } from "@gw/telemetry";

/** The message a supervisor sends a process to stop it the way SIGTERM would. */
export const SHUTDOWN_MESSAGE = "gw:shutdown";

/** More deaths than this within RESTART_WINDOW_MS: the supervisor gives up and stops (exit 1). */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;
const RESTART_DELAY_MS = 1_000;

/**
 * `GW_PROXY_PROCESSES` (docs/performance.md): with more than one, this process becomes their
 * supervisor and answers "supervise"; each forked process (and a process told 1) answers
 * "serve" and boots as usual. The processes share the port (node:cluster hands each new
 * connection to the next one). The supervisor serves nothing: it starts the processes, starts a
 * new one in place of one that died (and stops everything when they keep dying), and on SIGTERM
 * or SIGINT tells each to stop the way SIGTERM would (drain, then exit), then exits itself.
 */
export function superviseProcesses(opts: {
  service: string;
  defaultPort: number;
  env?: Record<string, string | undefined>;
}): "serve" | "supervise" {
  if (!cluster.isPrimary) return "serve";
  const env = opts.env ?? processEnv();
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(env, { defaultPort: opts.defaultPort });
  } catch (e) {
    // boot() says it, once, in the process that serves.
    if (e instanceof ConfigError) return "serve";
    throw e;
  }
  const count = config.GW_PROXY_PROCESSES;
  if (count <= 1) return "serve";
  if (!config.DATABASE_URL || !config.REDIS_URL) {
    console.error(
      "invalid configuration: GW_PROXY_PROCESSES above 1 needs DATABASE_URL and REDIS_URL (the processes share their store, caches and queue)",
    );
    process.exit(1);
  }
  const logger = createLogger({ level: config.GW_LOG_LEVEL, service: opts.service });
  supervise(logger, count, config.GW_SHUTDOWN_TIMEOUT_MS);
  return "supervise";
}

function supervise(logger: Logger, count: number, shutdownTimeoutMs: number): void {
  let stopping = false;
  let exitCode = 0;
  const deaths: number[] = [];
  // Ours, not cluster.workers: that list keeps a process until its IPC channel closed too.
  const alive = new Set<Worker>();
  const start = () => {
    const worker = cluster.fork();
    alive.add(worker);
    worker.once("exit", (code, signal) => died(worker, code, signal));
  };
  const died = (worker: Worker, code: number | null, signal: string | null) => {
    alive.delete(worker);
    if (stopping) {
      if (alive.size === 0) {
        logger.info("every process stopped");
        process.exit(exitCode);
      }
      return;
    }
    const now = Date.now();
    deaths.push(now);
    while ((deaths[0] ?? now) < now - RESTART_WINDOW_MS) deaths.shift();
    if (deaths.length > MAX_RESTARTS) {
      logger.error({ pid: worker.process.pid, code, signal }, "processes keep dying; stopping");
      stop("restarts", 1);
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, "a process died; starting another");
    setTimeout(() => {
      if (!stopping) start();
    }, RESTART_DELAY_MS).unref();
  };
  const stop = (reason: string, code = 0) => {
    if (stopping) {
      // A second signal: stop now.
      for (const w of alive) w.process.kill("SIGKILL");
      process.exit(1);
    }
    stopping = true;
    exitCode = code;
    logger.info({ reason }, "stopping every process");
    if (alive.size === 0) process.exit(exitCode);
    for (const w of alive) {
      if (w.isConnected()) w.send(SHUTDOWN_MESSAGE);
      else w.process.kill("SIGTERM");
    }
    // Each process bounds its own drain by GW_SHUTDOWN_TIMEOUT_MS; this is the backstop.
    setTimeout(() => {
      logger.warn("processes still running after the shutdown time-out; killing them");
      for (const w of alive) w.process.kill("SIGKILL");
      process.exit(1);
    }, shutdownTimeoutMs + 5_000).unref();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  logger.info({ processes: count }, "supervising proxy processes");
  for (let i = 0; i < count; i++) start();
}
