import { benchTenant, type Deployment } from "./deploy.ts";
import { type LoadResult, load } from "./load.ts";
import { cpuMsOf, quiet } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

type Variant = "verbatim" | "filtered";

const POLICY = {
  rules: [
    { action: "deny", match: { tools: ["admin_*"] } },
    ...Array.from({ length: 19 }, (_, i) => ({ action: "deny", match: { tools: [`other-${i}`] } })),
  ],
};

const LIST = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/list",
  params: {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});

async function tenantWithList(d: Deployment, variant: Variant) {
  const { token, call } = await benchTenant(d, `tools-${variant}`);
  const agent = await call("POST", "/v1/agents", {
    name: "bench-tools",
    upstream_url: `${d.upstream}/mcp?tools=200`,
    protocol: "mcp",
    mcp_transport: "streamable_http",
  });
  if (variant === "filtered") await call("PUT", "/v1/policy", POLICY);
  return { token, agentId: agent.id as string };
}

export async function toolListRows(d: Deployment, p: { rounds: number; seconds: number }): Promise<Row[]> {
  const tenants = {
    verbatim: await tenantWithList(d, "verbatim"),
    filtered: await tenantWithList(d, "filtered"),
  };
  const run = (v: Variant, seconds: number) =>
    load({
      url: `${d.proxy}/v1/proxy/${tenants[v].agentId}/stream`,
      headers: {
        authorization: `Bearer ${tenants[v].token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
      },
      body: LIST,
      connections: 1,
      seconds,
    });
  for (const v of ["verbatim", "filtered"] as const) await run(v, 1); // warm-up, catalog learnt
  const got: Record<Variant, { res: LoadResult; cpuUs: number }[]> = { verbatim: [], filtered: [] };
  const pid = d.proxyProc.pid as number;
  for (let r = 0; r < p.rounds * 2; r++) {
    for (const v of r % 2 === 0 ? (["verbatim", "filtered"] as const) : (["filtered", "verbatim"] as const)) {
      await quiet();
      const before = cpuMsOf(pid);
      const res = await run(v, p.seconds);
      if (res.errors > 0 || res.requests === 0)
        throw new Error(`tool list ${v}: ${res.errors} failed requests`);
      got[v].push({ res, cpuUs: ((cpuMsOf(pid) - before) * 1000) / res.requests });
    }
  }
  const cpu = (v: Variant) => median(got[v].map((x) => x.cpuUs));
  const p50 = (v: Variant) => median(got[v].map((x) => x.res.p50));
  return [
    {
      scenario: "tool list",
      metric: "200-tool tools/list p50 c=1 (bare: no policy, relayed verbatim)",
      unit: "ms",
      direct: null,
      bare: p50("verbatim"),
      gateway: p50("filtered"),
    },
    {
      scenario: "tool list",
      metric: `200-tool tools/list proxy CPU per list (bare: verbatim; filtered +${(cpu("filtered") - cpu("verbatim")).toFixed(0)} µs)`,
      unit: "µs",
      direct: null,
      bare: cpu("verbatim"),
      gateway: cpu("filtered"),
    },
  ];
}
