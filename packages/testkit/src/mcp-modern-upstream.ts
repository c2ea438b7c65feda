import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import type { ListedTool } from "./mcp-tools-upstream.ts";

export type ModernUpstream = {
  url: string;
  /** The tools the server lists now (each request builds a fresh server from it). */
  tools: ListedTool[];
  /** JSON-RPC methods and protocol-version headers of the requests received, in order. */
  requests: Array<{ method: string | null; version: string | null; session: string | null }>;
  close: () => Promise<void>;
};

/**
 * An MCP server of revision 2026-07-28 from the official v2 SDK (`createMcpHandler`, strict:
 * older-revision traffic is refused), on node:http. Stateless: every request is served by a
 * fresh server built from the current `tools`.
 */
export async function startModernUpstream(tools: ListedTool[]): Promise<ModernUpstream> {
  const state: ModernUpstream = { url: "", tools, requests: [], close: async () => {} };
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: "gw-modern-upstream", version: "1.0.0" });
      for (const t of state.tools) {
        server.registerTool(t.name, { description: t.description ?? "" }, async () => ({
          content: [{ type: "text", text: `called ${t.name}` }],
        }));
      }
      return server;
    },
    { legacy: "reject" },
  );
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    let method: string | null = null;
    try {
      method = (JSON.parse(body.toString()) as { method?: string }).method ?? null;
    } catch {}
    const header = (n: string) => (typeof req.headers[n] === "string" ? (req.headers[n] as string) : null);
    state.requests.push({
      method,
      version: header("mcp-protocol-version"),
      session: header("mcp-session-id"),
    });
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const answer = await handler.fetch(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method ?? "GET",
        headers,
        ...(req.method === "POST" ? { body } : {}),
      }),
    );
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  state.close = async () => {
    await handler.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return state;
}
