import { readFileSync } from "node:fs";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

const TLS_DIR = fileURLToPath(new URL("../fixtures/tls/", import.meta.url));
/** The test CA the gateway is told to trust (GW_UPSTREAM_CA_FILE) for HTTPS upstreams. */
export const TEST_CA_FILE = `${TLS_DIR}ca.pem`;

export type Received = { method: string; url: string; headers: IncomingMessage["headers"]; body: Buffer };
export type Upstream = {
  url: string;
  port: number;
  /** Every request that reached the server, in order, with its whole body. */
  received: Received[];
  server: Server;
  close: () => Promise<void>;
};

/**
 * A real local upstream. `handler` answers; the request body is read whole first (unless
 * `streamBody` is set, for handlers that consume the request themselves).
 */
export async function startUpstream(
  handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => unknown,
  opts: { tls?: boolean; streamBody?: boolean } = {},
): Promise<Upstream> {
  const received: Received[] = [];
  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    if (opts.streamBody) {
      received.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.alloc(0),
      });
      await handler(req, res, Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    await handler(req, res, body);
  };
  const server: Server = opts.tls
    ? createHttpsServer(
        { key: readFileSync(`${TLS_DIR}server-key.pem`), cert: readFileSync(`${TLS_DIR}server.pem`) },
        onRequest,
      )
    : createHttpServer(onRequest);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${opts.tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    received,
    server,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Polls `fn` until it returns a value that is not undefined, or gives up after `timeoutMs`. */
export async function eventually<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
