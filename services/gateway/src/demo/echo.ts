import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the echo answers with at most: the demo shows a call, not a file transfer. */
const MAX_ECHO_BYTES = 64 * 1024;

/**
 * The demo's plain HTTP upstream on 127.0.0.1: answers every request with what it received
 * (method, path, content type, the body's first 64 KiB and its whole length in `bytes`) as JSON; with `Accept: text/event-stream` it streams the same
 * as three server-sent events a moment apart, so a streaming call visibly streams.
 */
export async function startEchoServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    readBody(req).then(
      ({ head, bytes }) => {
        const echo = {
          method: req.method,
          path: req.url,
          content_type: req.headers["content-type"] ?? null,
          body: head.toString("utf8"),
          bytes,
        };
        if (!/text\/event-stream/.test(req.headers.accept ?? "")) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(`${JSON.stringify(echo)}\n`);
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        let n = 0;
        const tick = setInterval(() => {
          n++;
          res.write(`event: echo\ndata: ${JSON.stringify({ part: n, of: 3, ...echo })}\n\n`);
          if (n === 3) {
            clearInterval(tick);
            res.end();
          }
        }, 300);
        res.on("close", () => clearInterval(tick));
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`, server };
}

/** The body's first MAX_ECHO_BYTES (what the echo shows) and its whole length (what it counts). */
function readBody(req: IncomingMessage): Promise<{ head: Buffer; bytes: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let bytes = 0;
    req.on("data", (c: Buffer) => {
      bytes += c.length;
      if (kept < MAX_ECHO_BYTES) {
        const part = c.subarray(0, MAX_ECHO_BYTES - kept);
        chunks.push(part);
        kept += part.length;
      }
    });
    req.on("end", () => resolve({ head: Buffer.concat(chunks), bytes }));
    req.on("error", reject);
  });
}
