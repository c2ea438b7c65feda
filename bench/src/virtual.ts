import type { Deployment } from "./deploy.ts";
import { type LoadResult, load } from "./load.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

function request(method: string, name?: string) {
  const params = name === undefined ? { _meta: META } : { name, arguments: { text: "hi" }, _meta: META };
  return {
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    mcp: { "mcp-method": method, ...(name === undefined ? {} : { "mcp-name": name }) },
  };
}

/**
 * Virtual MCP servers (docs/mcp.md): a routed `tools/call` through a virtual server against the
 * same call through the member's own agent (target: at most +0.5 ms p50), and a merged
 * `tools/list` of four members against one member's own list, one caller at a time.
 */
export async function virtualRows(d: Deployment, p: { rounds: number; latSeconds: number }): Promise<Row[]> {
  const stream = (agent: string) => `${d.proxy}/v1/proxy/${agent}/stream`;
  const headers = (mcp: Record<string, string>) => ({
    authorization: `Bearer ${d.token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    ...mcp,
  });
  const member = d.mcp.members[0] as string;
  const run = (agent: string, r: ReturnType<typeof request>, seconds: number) =>
    load({ url: stream(agent), headers: headers(r.mcp), body: r.body, connections: 1, seconds });
  const calls = {
    own: request("tools/call", "tool_1"),
    routed: request("tools/call", "m0__tool_1"),
    list: request("tools/list"),
  };
  // Warm-up: JIT, pools, the agent cache.
  for (const [agent, r] of [
    [member, calls.own],
    [d.mcp.virtual, calls.routed],
    [member, calls.list],
    [d.mcp.virtual, calls.list],
  ] as const)
    await run(agent, r, 1);
  const got: Record<"own" | "routed" | "list1" | "list4", LoadResult[]> = {
    own: [],
    routed: [],
    list1: [],
    list4: [],
  };
  for (let i = 0; i < p.rounds; i++) {
    got.own.push(await run(member, calls.own, p.latSeconds));
    got.routed.push(await run(d.mcp.virtual, calls.routed, p.latSeconds));
    got.list1.push(await run(member, calls.list, p.latSeconds));
    got.list4.push(await run(d.mcp.virtual, calls.list, p.latSeconds));
  }
  const errors = Object.values(got)
    .flat()
    .reduce((n, x) => n + x.errors, 0);
  if (errors > 0) throw new Error(`virtual MCP server: ${errors} failed requests`);
  const p50 = (set: LoadResult[]) => median(set.map((x) => x.p50));
  const own = p50(got.own);
  const routed = p50(got.routed);
  return [
    {
      scenario: "virtual MCP",
      metric: "routed tools/call p50 c=1 (bare: the member's own agent)",
      unit: "ms",
      direct: null,
      bare: own,
      gateway: routed,
      target: { text: "<= member's agent + 0.5 ms", met: routed <= own + 0.5 },
    },
    {
      scenario: "virtual MCP",
      metric: "merged tools/list of 4 members p50 c=1 (bare: one member's own agent)",
      unit: "ms",
      direct: null,
      bare: p50(got.list1),
      gateway: p50(got.list4),
    },
  ];
}
