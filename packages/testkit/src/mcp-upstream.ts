import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/** One HTTP request the MCP upstream received, as the tests assert on it. */
export type McpUpstreamRequest = {
  /** HTTP method: POST carries a JSON-RPC message; GET opens the standalone stream; DELETE ends a session. */
  httpMethod: string;
  /** JSON-RPC method of a POSTed request or notification; null otherwise. */
  rpcMethod: string | null;
  rpcId: string | number | null;
  /** params.name of a tools/call. */
  tool: string | null;
  /** Request headers as received, names lower-case (authorization, mcp-session-id, x-gateway-*, ...). */
  headers: Record<string, string>;
  /** True when the fixture answered 503 on purpose (see `failFirst`). */
  injectedFailure: boolean;
};

export type McpUpstreamOptions = {
  /** Fail the first N POSTs of each named JSON-RPC method with 503, before the MCP server sees them. */
  failFirst?: Record<string, number>;
  /** Answer requests with application/json instead of an SSE stream (the SDK's enableJsonResponse). */
  jsonResponse?: boolean;
};

export type McpUpstream = {
  /** The Streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Every request received, in arrival order. */
  requests: McpUpstreamRequest[];
  /** The POSTs of one JSON-RPC method, injected failures included. */
  posts: (rpcMethod: string) => McpUpstreamRequest[];
  /** Session ids the server has issued. */
  sessionIds: () => string[];
  close: () => Promise<void>;
};

/**
 * A real MCP server from the official SDK (McpServer + StreamableHTTPServerTransport, stateful:
 * one transport and one server per session id), on node:http at 127.0.0.1 on a free port. Tools:
 * `echo {text}`, `add {a, b}`, `log_echo {text}`, which sends a logging notification on the
 * request's stream before its result (to prove that notifications ahead of a response are skipped),
 * and `ask_model {question}` / `ask_user`, which send sampling and elicitation requests to the
 * client on the standalone GET stream and return its answers.
 */
export async function startMcpUpstream(opts: McpUpstreamOptions = {}): Promise<McpUpstream> {
  const requests: McpUpstreamRequest[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const failuresLeft = new Map(Object.entries(opts.failFirst ?? {}));

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? "/", "http://x").pathname !== "/mcp") return jsonRpcError(res, 404, "Not found");
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const msg = isRecord(body) ? body : {};
    const rpcMethod = typeof msg.method === "string" ? msg.method : null;
    const params = isRecord(msg.params) ? msg.params : {};
    const entry: McpUpstreamRequest = {
      httpMethod: req.method ?? "",
      rpcMethod,
      rpcId: typeof msg.id === "string" || typeof msg.id === "number" ? msg.id : null,
      tool: rpcMethod === "tools/call" && typeof params.name === "string" ? params.name : null,
      headers: headersOf(req),
      injectedFailure: false,
    };
    requests.push(entry);
    if (req.method === "POST" && body === undefined) return jsonRpcError(res, 400, "Parse error", -32700);

    const left = rpcMethod ? (failuresLeft.get(rpcMethod) ?? 0) : 0;
    if (rpcMethod && left > 0) {
      failuresLeft.set(rpcMethod, left - 1);
      entry.injectedFailure = true;
      return jsonRpcError(res, 503, "Service unavailable (injected)");
    }

    const sid = req.headers["mcp-session-id"];
    let transport: StreamableHTTPServerTransport | undefined;
    if (typeof sid === "string") {
      transport = sessions.get(sid);
      if (!transport) return jsonRpcError(res, 404, "Session not found", -32001);
    } else if (req.method === "POST" && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: opts.jsonResponse ?? false,
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) sessions.delete(created.sessionId);
      };
      await createMcpServer().connect(created);
      transport = created;
    } else {
      return jsonRpcError(res, 400, "Bad Request: no valid session id");
    }
    await transport.handleRequest(req, res, body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    posts: (rpcMethod) => requests.filter((r) => r.httpMethod === "POST" && r.rpcMethod === rpcMethod),
    sessionIds: () => [...sessions.keys()],
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      // Standalone GET streams stay open until their client goes; do not wait for them.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function createMcpServer(): McpServer {
  const server = new McpServer(
    { name: "gw-test-upstream", version: "1.0.0" },
    { capabilities: { logging: {} } },
  );
  server.registerTool(
    "echo",
    { description: "Returns its text", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  server.registerTool(
    "log_echo",
    { description: "Logs, then returns its text", inputSchema: { text: z.string() } },
    async ({ text }, extra) => {
      await extra.sendNotification({
        method: "notifications/message",
        params: { level: "info", data: `echoing ${text.length} characters` },
      });
      return { content: [{ type: "text", text }] };
    },
  );
  // Server-initiated requests sent with no related request: the SDK puts them on the standalone
  // GET stream, which is how servers that sample or elicit outside a request's own stream work.
  server.registerTool(
    "ask_model",
    { description: "Asks the client's model (sampling)", inputSchema: { question: z.string() } },
    async ({ question }) => {
      const answer = await server.server.createMessage({
        messages: [{ role: "user", content: { type: "text", text: question } }],
        maxTokens: 64,
      });
      return { content: [{ type: "text", text: answer.content.type === "text" ? answer.content.text : "" }] };
    },
  );
  server.registerTool(
    "ask_user",
    { description: "Asks the user for a name (elicitation)", inputSchema: {} },
    async () => {
      const answer = await server.server.elicitInput({
        message: "What is your name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      });
      const name = answer.action === "accept" ? String(answer.content?.name ?? "") : answer.action;
      return { content: [{ type: "text", text: name }] };
    },
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function jsonRpcError(res: ServerResponse, status: number, message: string, code = -32000): void {
  res
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A JSON-RPC `initialize` request, as a raw MCP client sends it first (protocol 2025-06-18). */
export function mcpInitialize(id: string | number = 1) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  };
}
