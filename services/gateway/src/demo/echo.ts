import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the echo answers with at most: the demo shows a call, not a file transfer. */
const MAX_ECHO_BYTES = 64 * 1024;

/**
 * The demo's plain HTTP upstream on 127.0.0.1: answers every request with what it received
 * (method, path, content type, body) as JSON; with `Accept: text/event-stream` it streams the same
 * as three server-sent events a moment apart, so a streaming call visibly streams.
 */
export async function startEchoServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    readBody(req).then(
      (body) => {
        const echo = {
          method: req.method,
          path: req.url,
          content_type: req.headers["content-type"] ?? null,
          body: body.subarray(0, MAX_ECHO_BYTES).toString("utf8"),
          bytes: body.length,
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

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_ECHO_BYTES) chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
