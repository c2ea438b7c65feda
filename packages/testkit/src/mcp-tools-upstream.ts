import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** A tool as an MCP server lists it. */
export type ListedTool = {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  [key: string]: unknown;
};

export type ToolsUpstream = {
  url: string;
  /** The tools the server lists now: change it while a test runs (a rug pull). */
  tools: ListedTool[];
  /** JSON-RPC methods of the POSTs received, in order. */
  methods: string[];
  /** HTTP methods and session ids of every request, in order. */
  requests: Array<{
    httpMethod: string;
    rpcMethod: string | null;
    sessionId: string | null;
    authorization: string | null;
  }>;
  close: () => Promise<void>;
};

/**
 * A real MCP server from the official SDK (the low-level `Server` with its Streamable HTTP
 * transport, stateful: one transport per session) whose tool list is the mutable `tools` array,
 * served `pageSize` tools per page with an opaque cursor. `tools/call` echoes the tool's name.
 */
export async function startToolsUpstream(
  opts: { tools?: ListedTool[]; pageSize?: number; jsonResponse?: boolean } = {},
): Promise<ToolsUpstream> {
  const state: ToolsUpstream = {
    url: "",
    tools: opts.tools ?? [],
    methods: [],
    requests: [],
    close: async () => {},
  };
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const pageSize = opts.pageSize ?? 1_000;

  const newServer = () => {
    const server = new Server(
      { name: "gw-tools-upstream", version: "1.0.0" },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async (req) => {
      const start = req.params?.cursor ? Number(Buffer.from(req.params.cursor, "base64url").toString()) : 0;
      const page = state.tools.slice(start, start + pageSize);
      const next = start + pageSize < state.tools.length ? start + pageSize : null;
      return {
        tools: page,
        ...(next === null ? {} : { nextCursor: Buffer.from(String(next)).toString("base64url") }),
      };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req) => ({
      content: [{ type: "text", text: `called ${req.params.name}` }],
    }));
    return server;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const rpcMethod = isRecord(body) && typeof body.method === "string" ? body.method : null;
    const sid = req.headers["mcp-session-id"];
    state.requests.push({
      httpMethod: req.method ?? "",
      rpcMethod,
      sessionId: typeof sid === "string" ? sid : null,
      authorization: req.headers.authorization ?? null,
    });
    if (rpcMethod) state.methods.push(rpcMethod);
    let transport: StreamableHTTPServerTransport | undefined;
    if (typeof sid === "string") {
      transport = sessions.get(sid);
      if (!transport) return error(res, 404, "Session not found");
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
      await newServer().connect(created);
      transport = created;
    } else {
      return error(res, 400, "Bad Request: no valid session id");
    }
    await transport.handleRequest(req, res, body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  state.close = async () => {
    await Promise.allSettled([...sessions.values()].map((t) => t.close()));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
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

function error(res: ServerResponse, status: number, message: string): void {
  res
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message } }));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
