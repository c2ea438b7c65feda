import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  acceptedContent,
  createMcpHandler,
  inputRequired,
  type McpHttpHandler,
  McpServer,
  ResourceTemplate,
} from "@modelcontextprotocol/server";
import { z } from "zod";

/** One HTTP request a v2 member received, as tests assert on it. */
export type McpV2Request = {
  httpMethod: string;
  rpcMethod: string | null;
  /** params.name of tools/call and prompts/get. */
  name: string | null;
  headers: Record<string, string>;
};

export type McpV2Options = {
  /** The server's name (serverInfo.name) and the text its tools answer with. */
  name: string;
  /** Tool names to register; each echoes `<server name>:<tool>:<text>`. Default: echo, add. */
  tools?: string[];
  /** Prompt names; each answers one user message naming the server. Default: greet. */
  prompts?: string[];
  /** Also register `confirm`, a multi-round-trip tool (input_required, then its answer). */
  confirm?: boolean;
  /** A static resource `<name>://readme` and a template `<name>://items/{id}` (default true). */
  resources?: boolean;
  /** The address to listen on (default 127.0.0.1); `::1` puts the server on IPv6 loopback. */
  host?: string;
};

export type McpV2Server = {
  /** The endpoint, `http://127.0.0.1:<port>/mcp` (or the `host` it listens on). */
  url: string;
  requests: McpV2Request[];
  /** The SDK handler: `notify.toolsChanged()` publishes to open subscriptions/listen streams. */
  handler: McpHttpHandler;
  close: () => Promise<void>;
};

/**
 * A real MCP server of revision 2026-07-28 from the official v2 SDK (`createMcpHandler`, stateless,
 * one server instance per request) on node:http at 127.0.0.1 (or `host`). Tools answer with their server's
 * name, so a test sees which member served a routed call.
 */
export async function startMcpV2Server(opts: McpV2Options): Promise<McpV2Server> {
  const requests: McpV2Request[] = [];
  const factory = () => {
    const server = new McpServer({ name: opts.name, version: "1.0.0" });
    for (const tool of opts.tools ?? ["echo", "add"]) {
      server.registerTool(
        tool,
        { description: `${tool} of ${opts.name}`, inputSchema: z.object({ text: z.string().optional() }) },
        async ({ text }) => ({ content: [{ type: "text", text: `${opts.name}:${tool}:${text ?? ""}` }] }),
      );
    }
    if (opts.confirm) registerConfirm(server, opts.name);
    for (const prompt of opts.prompts ?? ["greet"]) {
      server.registerPrompt(
        prompt,
        { description: `${prompt} of ${opts.name}`, argsSchema: z.object({ who: z.string() }) },
        ({ who }) => ({
          messages: [{ role: "user", content: { type: "text", text: `${opts.name}:${prompt}:${who}` } }],
        }),
      );
    }
    if (opts.resources !== false) {
      server.registerResource("readme", `${opts.name}://readme`, { mimeType: "text/plain" }, async (uri) => ({
        contents: [{ uri: uri.href, text: `${opts.name} readme` }],
      }));
      server.registerResource(
        "items",
        new ResourceTemplate(`${opts.name}://items/{id}`, {
          list: undefined,
          complete: { id: (value) => ["1", "2", "10"].filter((v) => v.startsWith(value)) },
        }),
        { mimeType: "text/plain" },
        async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `${opts.name} item ${String(id)}` }] }),
      );
    }
    return server;
  };
  const handler = createMcpHandler(factory);
  const http = createServer((req, res) => {
    serve(handler, requests, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((r) => http.listen(0, host, r));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/mcp`,
    requests,
    handler,
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

/** Multi-round-trip: asks the client to confirm (input_required with requestState), then answers. */
function registerConfirm(server: McpServer, name: string): void {
  const confirmation = z.object({ confirm: z.boolean() });
  server.registerTool("confirm", { description: `confirm of ${name}` }, async (ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm", confirmation);
    if (answer?.confirm !== true) {
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({ message: "Confirm?", requestedSchema: confirmation }),
        },
        requestState: `${name}-state`,
      });
    }
    return { content: [{ type: "text", text: `${name}:confirmed` }] };
  });
}

async function serve(
  handler: McpHttpHandler,
  requests: McpV2Request[],
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
  let msg: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(body.toString("utf8"));
    if (parsed && typeof parsed === "object") msg = parsed as Record<string, unknown>;
  } catch {}
  const params = (msg.params ?? {}) as Record<string, unknown>;
  requests.push({
    httpMethod: req.method ?? "",
    rpcMethod: typeof msg.method === "string" ? msg.method : null,
    name: typeof params.name === "string" ? params.name : null,
    headers,
  });
  const abort = new AbortController();
  res.once("close", () => abort.abort());
  const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    signal: abort.signal,
    ...(req.method === "POST" ? { body } : {}),
  });
  const answer = await handler.fetch(request);
  const out: Record<string, string> = {};
  answer.headers.forEach((v, k) => {
    out[k] = v;
  });
  res.writeHead(answer.status, out);
  if (!answer.body) return void res.end();
  res.flushHeaders();
  const reader = answer.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {}
  res.end();
}
