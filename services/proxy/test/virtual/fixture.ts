import { type McpV2Server, type Res, startMcpV2Server, type TestApp } from "@gw/testkit";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type Caller, createAgent, pollDone } from "../helpers.ts";

export const REVISION = "2026-07-28";
export const META = {
  "io.modelcontextprotocol/protocolVersion": REVISION,
  "io.modelcontextprotocol/clientInfo": { name: "gw-virtual-test", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** Members started for one suite: official v2 SDK servers, closed together. */
export function memberPool() {
  const started: Array<{ close: () => Promise<unknown> }> = [];
  return {
    v2: async (
      name: string,
      opts: Omit<Parameters<typeof startMcpV2Server>[0], "name"> = {},
    ): Promise<McpV2Server> => {
      const s = await startMcpV2Server({ name, ...opts });
      started.push(s);
      return s;
    },
    add: (c: { close: () => Promise<unknown> }) => started.push(c),
    closeAll: () => Promise.allSettled(started.splice(0).map((s) => s.close())),
  };
}

export function memberAgent(call: Caller, url: string, extra: Record<string, unknown> = {}): Promise<string> {
  return createAgent(call, { name: "member", upstream_url: url, protocol: "mcp", ...extra });
}

export async function virtualAgent(
  call: Caller,
  members: unknown[],
  extra: Record<string, unknown> = {},
): Promise<string> {
  return createAgent(call, { name: "portal", protocol: "mcp", members, ...extra });
}

/** The official v2 client on the gateway's streaming path, speaking revision 2026-07-28. */
export async function connectV2(gw: TestApp, call: Caller, agentId: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/proxy/${agentId}/stream`), {
    requestInit: { headers: { Authorization: `Bearer ${call.token}` } },
  });
  const client = new Client(
    { name: "gw-virtual-test", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: REVISION } } },
  );
  await client.connect(transport);
  return client;
}

/**
 * The requests a member got on behalf of callers (they carry `X-Gateway-Invocation-ID`), without
 * the gateway's own probe of the member's revision (docs/mcp.md, Older revisions).
 */
export function relayed<T extends { headers: Record<string, string | string[] | undefined> }>(
  requests: readonly T[],
): T[] {
  return requests.filter((r) => r.headers["x-gateway-invocation-id"] !== undefined);
}

/** One JSON-RPC request of the revision, with its envelope and headers, as raw HTTP. */
export function rpc(
  method: string,
  params: Record<string, unknown> = {},
  id: number | string = 1,
  capabilities: Record<string, unknown> = {},
) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": REVISION,
    "mcp-method": method,
  };
  const name =
    typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : null;
  if (name !== null && method !== "completion/complete") headers["mcp-name"] = name;
  const meta = { ...META, "io.modelcontextprotocol/clientCapabilities": capabilities };
  return { body: { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } }, headers };
}

/** A raw request: a JSON-RPC body and its headers. */
export type RawRequest = { body: unknown; headers: Record<string, string> };

/** The same request through the transactional path: 202, then the stored answer from the poll. */
export async function transact(call: Caller, agentId: string, req: RawRequest) {
  const accepted = await call("POST", `/v1/proxy/${agentId}`, req.body, req.headers);
  if (accepted.status !== 202) return { accepted, polled: undefined, body: undefined };
  const polled = await pollDone(call, agentId, accepted.json.invocation_id);
  const b64 = polled.json.response?.body_b64 as string | undefined;
  const body = b64 ? JSON.parse(Buffer.from(b64, "base64").toString("utf8")) : undefined;
  return { accepted, polled, body };
}

/** The same request on the streaming path, raw. */
export function stream(call: Caller, agentId: string, req: RawRequest): Promise<Res> {
  return call("POST", `/v1/proxy/${agentId}/stream`, req.body, req.headers);
}
