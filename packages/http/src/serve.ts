import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "@gw/telemetry";
import { getRequestListener } from "@hono/node-server";

export type Served = { server: Server; port: number; url: string; close: () => Promise<void> };

/**
 * Anything with a fetch handler: a Hono app, or the gateway's path split. `direct`, when given, is
 * offered each request first on Node's own objects and returns false for what it does not serve
 * (the proxy's hot routes skip the framework; see the proxy's `direct.ts`).
 */
export type Fetchable = {
  // biome-ignore lint/suspicious/noExplicitAny: any app env.
  fetch: (req: Request, env: any) => Response | Promise<Response>;
  direct?: DirectListener;
};

/** Serves the request and returns true, or returns false and leaves it untouched. */
export type DirectListener = (req: IncomingMessage, res: ServerResponse) => boolean;

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
  const viaHono = getRequestListener(app.fetch);
  const direct = app.direct;
  const drain = drainState();
  const server = createServer((req, res) => {
    if (drain.refuse(req, res)) return;
    if (!direct?.(req, res)) void viaHono(req, res);
  });
  drain.server = server;
  server.keepAliveTimeout = 65_000;
  if (opts.longRequests) {
    // Node's default requestTimeout (300 s) would cut a live streaming upload.
    server.requestTimeout = 0;
    server.headersTimeout = 60_000;
  }
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({
        server,
        port: bound,
        url: `http://127.0.0.1:${bound}`,
        close: () => {
          drain.start();
          return closeServer(server, opts.drainMs ?? 5_000);
        },
      });
    });
  });
}

/** What a draining server answers every new request, on whichever connection it arrives. */
const SHUTTING_DOWN = JSON.stringify({ error: "server is shutting down; retry the request" });

const CLOSED_ON_DRAIN = new WeakSet<ServerResponse>();

/**
 * Marks a response that never ends by itself (an MCP agent's standalone GET stream, which stays
 * open for whatever the server may send): graceful shutdown closes it as soon as draining starts,
 * as a network break the client reconnects after (to another replica), instead of holding the
 * whole drain window open for it.
 */
export function closeOnDrain(res: ServerResponse): void {
  CLOSED_ON_DRAIN.add(res);
}

/**
 * Graceful shutdown on keep-alive connections (docs/operations.md). Until `start`, it only tracks
 * the responses in flight. Once draining: a response whose headers are not out yet says
 * `Connection: close`; a connection is closed as soon as its response is done; and a request that
 * still arrives on an open connection gets a clean 503 with `Connection: close` instead of being
 * admitted (or reset), on the Hono routes and the direct ones alike. A response marked with
 * `closeOnDrain` is closed at once.
 */
function drainState() {
  let draining = false;
  const inFlight = new Set<ServerResponse>();
  const state = {
    server: undefined as Server | undefined,
    /** Answers 503 and returns true while draining; otherwise tracks `res` and returns false. */
    refuse(req: IncomingMessage, res: ServerResponse): boolean {
      if (draining) {
        res.shouldKeepAlive = false;
        req.resume();
        res.writeHead(503, { "content-type": "application/json", connection: "close" });
        res.end(SHUTTING_DOWN);
        return true;
      }
      inFlight.add(res);
      res.once("close", () => {
        inFlight.delete(res);
        // Its connection is idle now: close it before another request can arrive on it.
        if (draining) setImmediate(() => state.server?.closeIdleConnections());
      });
      return false;
    },
    start() {
      draining = true;
      // Node writes `Connection: close` for a response that may not keep its connection alive,
      // and closes the connection after it; one whose headers are out is closed on "close" above.
      for (const res of inFlight) {
        if (CLOSED_ON_DRAIN.has(res)) res.destroy();
        else if (!res.headersSent) res.shouldKeepAlive = false;
      }
    },
  };
  return state;
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
 * The part of GW_SHUTDOWN_TIMEOUT_MS that in-flight requests get to finish: the rest is kept for
 * flushing records and closing pools after they were cut.
 */
export function drainWindowMs(shutdownTimeoutMs: number): number {
  return Math.max(shutdownTimeoutMs - 3_000, Math.floor(shutdownTimeoutMs / 2));
}

/**
 * A signal this soon after the shutdown began belongs to the same request to stop. Ctrl-C in a
 * terminal reaches `pnpm start`'s process twice: the terminal signals the whole foreground process
 * group, and pnpm, its parent, forwards the signal it got a moment later (unless the kernel merges
 * the two). Taken as a second signal, that copy cut every call the drain was letting finish.
 */
const SAME_REQUEST_MS = 2_000;

/**
 * Graceful shutdown on SIGTERM/SIGINT: run `stop` (drain servers, workers, close pools) raced
 * against `timeoutMs`, then exit. A second signal, SAME_REQUEST_MS or more after the first, exits
 * at once.
 */
export function onShutdown(
  logger: Logger,
  timeoutMs: number,
  stop: () => Promise<void>,
): (reason: string) => void {
  let began: number | undefined;
  const begin = (reason: string) => {
    began = Date.now();
    logger.info({ signal: reason }, "shutting down");
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
  // Kept for the life of the process: without a listener, a repeated signal would kill it.
  const handler = (signal: string) => {
    if (began === undefined) begin(signal);
    else if (Date.now() - began >= SAME_REQUEST_MS) process.exit(1);
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
  // A supervisor's request (GW_PROXY_PROCESSES) starts the same shutdown; a signal that came too
  // (Ctrl-C reaches every process of the group) is not a second one.
  return (reason) => {
    if (began === undefined) begin(reason);
  };
}
