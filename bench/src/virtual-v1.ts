import type { Deployment } from "./deploy.ts";
import { type LoadResult, load } from "./load.ts";
import { spawnHelper } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

const OLD = "2025-11-25";
const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: OLD, capabilities: {}, clientInfo: { name: "bench", version: "1" } },
});
const call = (name: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: { text: "hi" } },
  });

/**
 * A virtual server with an SDK 1.x member (docs/mcp.md, Older revisions): a routed `tools/call` of
 * a 2025-11-25 client through a virtual server whose one member is an official SDK 1.x server
 * (stateful, SSE answers), against the same call through the member's own MCP agent on a session
 * of its own (target: at most +0.5 ms p50), one caller at a time.
 */
export async function virtualV1Rows(
  d: Deployment,
  p: { rounds: number; latSeconds: number },
): Promise<Row[]> {
  const up = await spawnHelper("mcp-v1-upstream.ts");
  const create = async (body: Record<string, unknown>) => {
    const res = await fetch(`${d.controlPlane}/v1/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`creating agent: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  const member = await create({
    name: "bench-v1-member",
    protocol: "mcp",
    upstream_url: `http://127.0.0.1:${up.port}/mcp`,
  });
  const virtual = await create({
    name: "bench-v1-virtual",
    protocol: "mcp",
    members: [{ agent_id: member, prefix: "v1" }],
  });
  const base = {
    authorization: `Bearer ${d.token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const stream = (agent: string) => `${d.proxy}/v1/proxy/${agent}/stream`;
  // A session each, as a client opens it: the member's own (through its agent), the gateway's.
  const session = async (agent: string) => {
    const res = await fetch(stream(agent), { method: "POST", headers: base, body: INIT });
    await res.arrayBuffer();
    const sid = res.headers.get("mcp-session-id");
    if (!sid) throw new Error(`no session id from ${agent}: ${res.status}`);
    await fetch(stream(agent), {
      method: "POST",
      headers: { ...base, "mcp-session-id": sid, "mcp-protocol-version": OLD },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    }).then((r) => r.arrayBuffer());
    return { ...base, "mcp-session-id": sid, "mcp-protocol-version": OLD };
  };
  const own = { url: stream(member), headers: await session(member), body: call("echo") };
  const routed = { url: stream(virtual), headers: await session(virtual), body: call("v1__echo") };
  const run = (spec: typeof own, seconds: number) => load({ ...spec, connections: 1, seconds });
  await run(own, 1);
  await run(routed, 1);
  const got: Record<"own" | "routed", LoadResult[]> = { own: [], routed: [] };
  for (let i = 0; i < p.rounds; i++) {
    got.own.push(await run(own, p.latSeconds));
    got.routed.push(await run(routed, p.latSeconds));
  }
  up.child.kill();
  const errors = [...got.own, ...got.routed].reduce((n, x) => n + x.errors, 0);
  if (errors > 0) throw new Error(`virtual server with an SDK 1.x member: ${errors} failed requests`);
  const ownP50 = median(got.own.map((x) => x.p50));
  const routedP50 = median(got.routed.map((x) => x.p50));
  return [
    {
      scenario: "virtual MCP",
      metric:
        "virtual server with an SDK 1.x member: routed tools/call p50 c=1 (bare: the member's own agent)",
      unit: "ms",
      direct: null,
      bare: ownP50,
      gateway: routedP50,
      target: { text: "<= member's agent + 0.5 ms", met: routedP50 <= ownP50 + 0.5 },
    },
  ];
}
