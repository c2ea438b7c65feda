import { type ListedTool, type Res, startToolsUpstream, type TestApp, type ToolsUpstream } from "@gw/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Caller, createAgent } from "../helpers.ts";

/** Suite-scoped cleanup: every upstream and client a test starts is closed after it. */
export const closers: Array<() => Promise<unknown>> = [];
export const closeAll = () => Promise.allSettled(closers.splice(0).map((close) => close()));

export function tool(name: string, description = `the ${name} tool`): ListedTool {
  return { name, description, inputSchema: { type: "object", properties: { text: { type: "string" } } } };
}

export async function toolsUpstream(
  opts: Parameters<typeof startToolsUpstream>[0] = {},
): Promise<ToolsUpstream> {
  const u = await startToolsUpstream(opts);
  closers.push(u.close);
  return u;
}

export function mcpAgent(
  call: Caller,
  upstreamUrl: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  return createAgent(call, {
    upstream_url: upstreamUrl,
    protocol: "mcp",
    mcp_transport: "streamable_http",
    ...extra,
  });
}

/** The official SDK client on the gateway's streaming endpoint, with the caller's token. */
export async function connect(gw: TestApp, call: Caller, agentId: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/proxy/${agentId}/stream`), {
    requestInit: { headers: { Authorization: `Bearer ${call.token}` } },
  });
  const client = new Client({ name: "gw-tools-test", version: "1.0.0" });
  await client.connect(transport);
  closers.push(() => client.close());
  return client;
}

/** Reads the agent's catalog until `ready` accepts it (learning is written after the answer). */
export async function catalogWhen(call: Caller, agentId: string, ready: (res: Res) => boolean): Promise<Res> {
  const until = Date.now() + 15_000;
  for (;;) {
    const res = await call("GET", `/v1/agents/${agentId}/tools`);
    if (ready(res)) return res;
    if (Date.now() > until) throw new Error(`catalog not as expected: ${res.status} ${res.text}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function statuses(res: Res): Record<string, string> {
  return Object.fromEntries(
    (res.json.data as Array<{ name: string; status: string }>).map((t) => [t.name, t.status]),
  );
}
