import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "@gw/telemetry";
import { serve } from "@hono/node-server";

export type Served = { server: Server; port: number; url: string; close: () => Promise<void> };

/** Anything with a fetch handler: a Hono app, or the gateway's path split. */
// biome-ignore lint/suspicious/noExplicitAny: any app env.
export type Fetchable = { fetch: (req: Request, env: any) => Response | Promise<Response> };

/** Listens on `port` (0 → any free port). */
export function listen(app: Fetchable, port: number, hostname = "0.0.0.0"): Promise<Served> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info: AddressInfo) => {
      const url = `http://127.0.0.1:${info.port}`;
      resolve({
        server: server as Server,
        port: info.port,
        url,
        close: () => closeServer(server as Server, 5_000),
      });
    }) as Server;
    server.keepAliveTimeout = 65_000;
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
