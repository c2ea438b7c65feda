// The floor for any Node proxy: node:http in, undici out, both bodies piped, nothing else.
// `node --import tsx bare-proxy.ts <origin>`; prints `{"port": n}` once listening.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";

const origin = process.argv[2];
if (!origin) throw new Error("usage: bare-proxy.ts <upstream origin>");
const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "host", "upgrade", "te", "trailer"]);
const agent = new Agent({ connections: 256, keepAliveTimeout: 30_000 });

const server = createServer(async (req, res) => {
  const headers: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    if (!HOP.has(name.toLowerCase())) headers.push(name, req.rawHeaders[i + 1] as string);
  }
  try {
    const up = await agent.request({
      origin,
      path: req.url ?? "/",
      method: "POST",
      headers,
      body: req,
    });
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
    res.writeHead(up.statusCode, out);
    res.flushHeaders();
    up.body.pipe(res);
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on("SIGTERM", () => process.exit(0));
