// The benchmark's upstream, run as its own process: `node --import tsx upstream.ts`.
// Prints `{"port": n}` on stdout once listening.
//   POST /echo            small JSON answer (request body read and dropped)
//   POST /sink            discards the request body, answers {"bytes": n}
//   POST /source?bytes=n  answers n bytes generated from one repeated buffer
//   POST /sse?n=&every=   n SSE events, one every `every` ms, each stamped with its flush time
//   POST /token           an OAuth token endpoint: one fixed access token that lives an hour
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { nowMs } from "./clock.ts";

const CHUNK = Buffer.alloc(64 * 1024, "x");
const TOKEN = JSON.stringify({ access_token: "bench-access-token", token_type: "Bearer", expires_in: 3600 });
const SMALL = Buffer.from(JSON.stringify({ ok: true, answer: "hello from the upstream" }));

async function drain(req: IncomingMessage): Promise<number> {
  let n = 0;
  for await (const c of req) n += (c as Buffer).length;
  return n;
}

function source(res: ServerResponse, total: number) {
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": total });
  let left = total;
  const pump = () => {
    while (left > 0) {
      const part = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= part.length;
      if (!res.write(part)) {
        res.once("drain", pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

function sse(res: ServerResponse, n: number, every: number) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let seq = 0;
  const timer = setInterval(() => {
    if (seq >= n || res.destroyed) {
      clearInterval(timer);
      res.end();
      return;
    }
    // Stamped as late as possible: the delay measured is flush → client.
    res.write(`id: ${seq}\ndata: ${nowMs()}\n\n`);
    seq++;
  }, every);
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  switch (url.pathname) {
    case "/echo":
      await drain(req);
      res.writeHead(200, { "content-type": "application/json", "content-length": SMALL.length });
      res.end(SMALL);
      return;
    case "/sink": {
      const bytes = await drain(req);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ bytes }));
      return;
    }
    case "/source":
      await drain(req);
      source(res, Number(url.searchParams.get("bytes") ?? "0"));
      return;
    case "/sse":
      await drain(req);
      sse(res, Number(url.searchParams.get("n") ?? "100"), Number(url.searchParams.get("every") ?? "5"));
      return;
    case "/token":
      await drain(req);
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(TOKEN);
      return;
    default:
      res.writeHead(404).end();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on("SIGTERM", () => process.exit(0));
