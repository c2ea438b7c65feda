// x402 inside MCP tool calls (docs/payments.md, MCP tool calls): a paid tools/call against the same
// free call, verification only (the tenant settles nothing), proxy CPU per call and latency.
import { newPayer } from "@gw/testkit";
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { request } from "undici";
import { benchTenant, type Deployment } from "./deploy.ts";
import { cpuMsOf, quiet } from "./procs.ts";
import type { Row } from "./report.ts";
import { median, percentile } from "./stats.ts";

type Variant = "free" | "paid";
const PAY_TO = "0x5555555555555555555555555555555555555555";
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

const callBody = (id: number, payment?: PaymentPayload) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name: "search",
      arguments: { q: "bench" },
      ...(payment ? { _meta: { "x402/payment": payment } } : {}),
    },
  });

async function agentFor(d: Deployment, v: Variant) {
  const { token, call } = await benchTenant(d, `x402-mcp-${v}`);
  const agent = await call("POST", "/v1/agents", {
    name: `bench-x402-mcp-${v}`,
    upstream_url: `${d.upstream}/mcp`,
    protocol: "mcp",
    mcp_transport: "streamable_http",
    ...(v === "paid"
      ? { tool_prices: [{ tool: "search", amount: "1000", network: "base-sepolia", pay_to: PAY_TO }] }
      : {}),
  });
  return { token, url: `${d.proxy}/v1/proxy/${agent.id}/stream` };
}

async function post(url: string, token: string, body: string): Promise<Record<string, unknown>> {
  const res = await request(url, {
    method: "POST",
    headers: { ...HEADERS, authorization: `Bearer ${token}` },
    body,
  });
  const json = (await res.body.json()) as Record<string, unknown>;
  if (res.statusCode !== 200) throw new Error(`x402 mcp bench: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

/**
 * One row pair: `calls` sequential tools/calls per round (c=1, every paid call with its own
 * authorization, signed beforehand by the official x402 client), rounds interleaved, proxy CPU per
 * call and p50 of each round.
 */
export async function x402McpRows(d: Deployment, p: { rounds: number; quick: boolean }): Promise<Row[]> {
  const agents = { free: await agentFor(d, "free"), paid: await agentFor(d, "paid") };
  const unpaid = await post(agents.paid.url, agents.paid.token, callBody(0));
  const required = (unpaid.result as { structuredContent: PaymentRequired }).structuredContent;
  const calls = p.quick ? 150 : 400;
  const rounds = p.rounds * 2;
  const payer = registerExactEvmScheme(new x402Client(), { signer: newPayer() });
  // Signed just before each paid round, outside it (an authorization is valid for maxTimeoutSeconds).
  const sign = async (n: number) => {
    const out: PaymentPayload[] = [];
    for (let i = 0; i < n; i++) out.push(await payer.createPaymentPayload(required));
    return out;
  };
  const run = async (v: Variant, payments: PaymentPayload[] | null) => {
    const times: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      const answer = await post(agents[v].url, agents[v].token, callBody(i + 1, payments?.[i]));
      times.push(performance.now() - t0);
      const result = answer.result as
        | { isError?: boolean; structuredContent?: { error?: string } }
        | undefined;
      if (result?.isError)
        throw new Error(`x402 mcp bench: ${v} call refused: ${result.structuredContent?.error}`);
    }
    return times;
  };
  // Warm-up: caches, JIT.
  await run("free", null);
  await run("paid", await sign(calls));
  const pid = d.proxyProc.pid as number;
  const got: Record<Variant, { cpuUs: number; p50: number }[]> = { free: [], paid: [] };
  for (let r = 0; r < rounds; r++) {
    for (const v of r % 2 === 0 ? (["free", "paid"] as const) : (["paid", "free"] as const)) {
      const payments = v === "paid" ? await sign(calls) : null;
      await quiet();
      const before = cpuMsOf(pid);
      const times = await run(v, payments);
      got[v].push({ cpuUs: ((cpuMsOf(pid) - before) * 1000) / calls, p50: percentile(times, 50) });
    }
  }
  const cpu = (v: Variant) => median(got[v].map((x) => x.cpuUs));
  const added = cpu("paid") - cpu("free");
  return [
    {
      scenario: "x402 MCP",
      metric: "tools/call p50 c=1, paid (verification only) vs free (bare: free)",
      unit: "ms",
      direct: null,
      bare: median(got.free.map((x) => x.p50)),
      gateway: median(got.paid.map((x) => x.p50)),
    },
    {
      scenario: "x402 MCP",
      metric: `tools/call proxy CPU per call, paid (verification only) vs free (+${added.toFixed(0)} µs)`,
      unit: "µs",
      direct: null,
      bare: cpu("free"),
      gateway: cpu("paid"),
    },
  ];
}
