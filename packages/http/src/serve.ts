import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "@gw/telemetry";
import { serve } from "@hono/node-server";

export type Served = { server: Server; port: number; url: string; close: () => Promise<void> };

/** Anything with a fetch handler: a Hono app, or the gateway's path split. */
// biome-ignore lint/suspicious/noExplicitAny: any app env.
export type Fetchable = { fetch: (req: Request, env: any) => Response | Promise<Response> };

export type ListenOptions = {
  /** How long `close` lets in-flight requests finish before dropping them; default 5 s. */
  drainMs?: number;
  /**
   * The server carries the proxy paths: no whole-request time-out (a streaming body is unbounded;
   * the proxy's own idle time-outs apply), headers still within 60 s.
   */
  longRequests?: boolean;
};

/** Listens on `port` (0 → any free port). */
export function listen(
  app: Fetchable,
  port: number,
  hostname = "0.0.0.0",
  opts: ListenOptions = {},
): Promise<Served> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info: AddressInfo) => {
      const url = `http://127.0.0.1:${info.port}`;
      resolve({
        server: server as Server,
        port: info.port,
        url,
        close: () => closeServer(server as Server, opts.drainMs ?? 5_000),
      });
    }) as Server;
    server.keepAliveTimeout = 65_000;
    if (opts.longRequests) {
      // Node's default requestTimeout (300 s) would cut a live streaming upload.
      server.requestTimeout = 0;
      server.headersTimeout = 60_000;
    }
    server.once("error", reject);
  });
}

/** Stops accepting, lets in-flight requests finish, then drops what is left after `timeoutMs`. */
export function closeServer(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.closeAllConnections();
      resolve();
    }, timeoutMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Graceful shutdown on SIGTERM/SIGINT: run `stop` (drain servers, workers, close pools) raced
 * against `timeoutMs`, then exit. A second signal exits at once.
 */
/**
 * The part of GW_SHUTDOWN_TIMEOUT_MS that in-flight requests get to finish: the rest is kept for
 * flushing records and closing pools after they were cut.
 */
export function drainWindowMs(shutdownTimeoutMs: number): number {
  return Math.max(shutdownTimeoutMs - 3_000, Math.floor(shutdownTimeoutMs / 2));
}

export function onShutdown(logger: Logger, timeoutMs: number, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, "shutting down");
    const deadline = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), timeoutMs).unref());
    Promise.race([stop().then(() => "done" as const), deadline])
      .then((how) => {
        if (how === "timeout") logger.warn("shutdown timed out; exiting with work in flight");
        else logger.info("shutdown complete");
        process.exit(0);
      })
      .catch((e: unknown) => {
        logger.error({ err: e instanceof Error ? e.message : "error" }, "shutdown failed");
        process.exit(1);
      });
  };
  process.once("SIGTERM", handler);
  process.once("SIGINT", handler);
}
