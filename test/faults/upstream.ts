import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The upstream of the fault suite, one origin with a behaviour per path. Every request is counted
 * per `x-gateway-invocation-id`, so a call the gateway made twice shows up as 2.
 *
 * - `/ok`: 200 "ok" (after `?ms=` milliseconds)
 * - `/hold`: held open while `holding` is true (a call in flight when a worker dies), else 200
 * - `/reset`: 200 head and half a body, then the connection is destroyed
 * - `/long?ms=`: a chunk every 100 ms for `ms`, then the end
 * - `/sse`: three events 200 ms apart, then the end
 * - `/sink`: reads the whole upload, answers its size
 * - `/mcp`: a JSON-RPC result for the request's id
 */
export type FaultUpstream = {
  url: string;
  hits: Map<string, number>;
  /** The path each invocation reached (`/ok`, `/long`, ...): tells the modes' calls apart. */
  paths: Map<string, string>;
  holding: boolean;
  held: Set<ServerResponse>;
  close: () => Promise<void>;
};

export async function startFaultUpstream(): Promise<FaultUpstream> {
  const up: FaultUpstream = {
    url: "",
    hits: new Map(),
    paths: new Map(),
    holding: false,
    held: new Set(),
    close: async () => {},
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const id = req.headers["x-gateway-invocation-id"];
    const url = new URL(req.url ?? "/", "http://x");
    if (typeof id === "string") {
      up.hits.set(id, (up.hits.get(id) ?? 0) + 1);
      up.paths.set(id, url.pathname);
    }
    const ms = Number(url.searchParams.get("ms") ?? 0);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    switch (url.pathname) {
      case "/hold":
        if (up.holding) {
          up.held.add(res);
          res.once("close", () => up.held.delete(res));
          return;
        }
        res.end("ok");
        return;
      case "/reset":
        res.writeHead(200, { "content-type": "text/plain", "content-length": "1000" });
        res.write("x".repeat(500), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      case "/long": {
        res.writeHead(200, { "content-type": "text/plain" });
        const until = Date.now() + ms;
        const timer = setInterval(() => {
          if (Date.now() >= until) {
            clearInterval(timer);
            res.end("end\n");
          } else res.write("tick\n");
        }, 100);
        res.once("close", () => clearInterval(timer));
        return;
      }
      case "/sse": {
        res.writeHead(200, { "content-type": "text/event-stream" });
        let n = 0;
        const timer = setInterval(() => {
          n++;
          res.write(`data: ${n}\n\n`);
          if (n === 3) {
            clearInterval(timer);
            res.end();
          }
        }, 200);
        res.once("close", () => clearInterval(timer));
        return;
      }
      case "/sink":
        res.end(String(body.length));
        return;
      case "/mcp": {
        let rpcId: unknown = null;
        try {
          rpcId = (JSON.parse(body.toString()) as { id?: unknown }).id ?? null;
        } catch {
          // not JSON
        }
        if (up.holding) {
          up.held.add(res);
          res.once("close", () => up.held.delete(res));
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: rpcId, result: { content: [] } }));
        return;
      }
      default:
        if (ms) await new Promise((r) => setTimeout(r, ms));
        res.end("ok");
    }
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  up.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return up;
}
