import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TOOLS = [
  {
    name: "echo",
    description: "Returns its text",
    inputSchema: { type: "object" as const, properties: { text: { type: "string" } }, required: ["text"] },
  },
  {
    name: "add",
    description: "Adds two numbers",
    inputSchema: {
      type: "object" as const,
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
  },
];

/** One SDK server per request: the demo server is stateless, so any call works without initialize. */
function mcpServer(): Server {
  const server = new Server({ name: "gw-demo-mcp", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = req.params.arguments ?? {};
    if (req.params.name === "echo") return { content: [{ type: "text", text: String(args.text ?? "") }] };
    if (req.params.name === "add") {
      return { content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] };
    }
    return { isError: true, content: [{ type: "text", text: `unknown tool ${req.params.name}` }] };
  });
  return server;
}

/**
 * The demo's MCP server on 127.0.0.1: the official SDK over Streamable HTTP, stateless, answering
 * in plain JSON (so a curl or the transactional poll shows the result directly). Tools `echo` and `add`.
 */
export async function startMcpServer(): Promise<{ url: string; server: HttpServer }> {
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // No session id generator: stateless, every request stands alone.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    const mcp = mcpServer();
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}
