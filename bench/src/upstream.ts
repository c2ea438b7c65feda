// The benchmark's upstream, run as its own process: `node --import tsx upstream.ts`.
// Prints `{"port": n}` on stdout once listening.
//   POST /echo            small JSON answer (request body read and dropped)
//   POST /sink            discards the request body, answers {"bytes": n}
//   POST /source?bytes=n  answers n bytes generated from one repeated buffer
//   POST /sse?n=&every=   n SSE events, one every `every` ms, each stamped with its flush time
//   POST /token           an OAuth token endpoint: one fixed access token that lives an hour
//   POST /a2a             a minimal A2A JSON-RPC agent: SendMessage → a completed Task (JSON);
//                         SendStreamingMessage → the task, a status, an artifact, a final status (SSE)
//   POST /mcp             a minimal stateless MCP server (revision 2026-07-28): tools/list (10
//                         tools), tools/call (?answer=4k: a 4 KiB text with PII and a token),
//                         server/discover, as JSON; a virtual server's member
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { nowMs } from "./clock.ts";
import { GUARDED_TEXT } from "./guard-text.ts";

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

const MCP_TOOLS = Array.from({ length: 10 }, (_, i) => ({
  name: `tool_${i}`,
  description: `bench tool ${i}`,
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
}));

/** 200 tools for the tool-list rows (`/mcp?tools=200`): every fourth is an `admin_` tool. */
const MANY_TOOLS = Array.from({ length: 200 }, (_, i) => ({
  name: i % 4 === 0 ? `admin_${i}` : `tool_${i}`,
  description: `bench tool ${i}, which does one thing well`,
  inputSchema: { type: "object", properties: { text: { type: "string" }, n: { type: "number" } } },
}));

/** The answer of the bench's MCP member to one JSON-RPC request. */
function mcpAnswer(body: string, many = false, guarded = false): string {
  const msg = JSON.parse(body) as { id?: unknown; method?: string };
  const result =
    msg.method === "tools/list"
      ? { tools: many ? MANY_TOOLS : MCP_TOOLS, resultType: "complete", ttlMs: 0, cacheScope: "private" }
      : msg.method === "server/discover"
        ? { supportedVersions: ["2026-07-28"], capabilities: { tools: {} }, resultType: "complete" }
        : {
            content: [{ type: "text", text: guarded ? GUARDED_TEXT : "hello from the upstream" }],
            resultType: "complete",
          };
  return JSON.stringify({ jsonrpc: "2.0", id: msg.id ?? null, result });
}

const A2A_TASK = {
  id: "task-bench",
  contextId: "ctx-bench",
  status: { state: "TASK_STATE_COMPLETED" },
  artifacts: [{ artifactId: "a", parts: [{ text: "hello from the upstream" }] }],
};

/** An A2A answer to one JSON-RPC request: a Task as JSON, or the events of a streamed task. */
function a2aAnswer(res: ServerResponse, text: string): void {
  const msg = JSON.parse(text) as { id?: unknown; method?: string };
  const reply = (result: unknown) => JSON.stringify({ jsonrpc: "2.0", id: msg.id ?? null, result });
  if (msg.method !== "SendStreamingMessage") {
    const body = Buffer.from(reply({ task: A2A_TASK }));
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
    res.end(body);
    return;
  }
  const { id: taskId, contextId } = A2A_TASK;
  const events = [
    { task: { ...A2A_TASK, status: { state: "TASK_STATE_SUBMITTED" }, artifacts: [] } },
    { statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_WORKING" } } },
    { artifactUpdate: { taskId, contextId, artifact: A2A_TASK.artifacts[0], lastChunk: true } },
    { statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_COMPLETED" } } },
  ];
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const e of events) res.write(`data: ${reply(e)}\n\n`);
  res.end();
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
    case "/a2a": {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      try {
        a2aAnswer(res, Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400).end();
      }
      return;
    }
    case "/mcp": {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      let answer: Buffer;
      try {
        answer = Buffer.from(
          mcpAnswer(
            Buffer.concat(chunks).toString("utf8"),
            url.searchParams.get("tools") === "200",
            url.searchParams.get("answer") === "4k",
          ),
        );
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/json", "content-length": answer.length });
      res.end(answer);
      return;
    }
    default:
      res.writeHead(404).end();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on("SIGTERM", () => process.exit(0));
