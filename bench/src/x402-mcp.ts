// x402 inside MCP tool calls (docs/payments.md, MCP tool calls): a paid tools/call against the same
// free call, verification only (the tenant settles nothing), proxy CPU per call and latency.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
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
 * One row pair per concurrency (c=1 and c=16): tools/calls per round, every paid call with its own
 * authorization (signed beforehand by the official x402 client), rounds interleaved, proxy CPU per
 * call and p50 of each round.
 */
export async function x402McpRows(
  d: Deployment,
  p: { rounds: number; quick: boolean; windowsFile?: string | undefined },
): Promise<Row[]> {
  const agents = { free: await agentFor(d, "free"), paid: await agentFor(d, "paid") };
  const unpaid = await post(agents.paid.url, agents.paid.token, callBody(0));
  const required = (unpaid.result as { structuredContent: PaymentRequired }).structuredContent;
  const perCaller = p.quick ? 150 : 400;
  const rounds = p.rounds * 2;
  const payer = registerExactEvmScheme(new x402Client(), { signer: newPayer() });
  // Signed just before each paid round, outside it (an authorization is valid for maxTimeoutSeconds).
  const sign = async (n: number) => {
    const out: PaymentPayload[] = [];
    for (let i = 0; i < n; i++) out.push(await payer.createPaymentPayload(required));
    return out;
  };
  /** `calls` tools/calls by `c` callers at once, each call after the caller's previous one. */
  const run = async (v: Variant, c: number, calls: number, payments: PaymentPayload[] | null) => {
    const times: number[] = [];
    let next = 0;
    const caller = async () => {
      for (let i = next++; i < calls; i = next++) {
        const t0 = performance.now();
        const answer = await post(agents[v].url, agents[v].token, callBody(i + 1, payments?.[i]));
        times.push(performance.now() - t0);
        const result = answer.result as
          | { isError?: boolean; structuredContent?: { error?: string } }
          | undefined;
        if (result?.isError)
          throw new Error(`x402 mcp bench: ${v} call refused: ${result.structuredContent?.error}`);
      }
    };
    await Promise.all(Array.from({ length: c }, caller));
    return times;
  };
  // c=1, then c=16: at c=16 concurrent paid calls share the statement that takes their nonces.
  const levels = [1, 16].map((c) => ({ c, calls: c === 1 ? perCaller : perCaller * 4 }));
  // Warm-up: caches, JIT.
  for (const { c, calls } of levels) {
    await run("free", c, calls, null);
    await run("paid", c, calls, await sign(calls));
  }
  const pid = d.proxyProc.pid as number;
  const got = new Map<string, { cpuUs: number; p50: number }[]>();
  // Each round's span on the monotonic clock (µs, as V8's profiles count it), to split a profile by variant.
  const windows: { label: string; from: number; to: number }[] = [];
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  for (let r = 0; r < rounds; r++) {
    for (const { c, calls } of levels) {
      for (const v of r % 2 === 0 ? (["free", "paid"] as const) : (["paid", "free"] as const)) {
        const payments = v === "paid" ? await sign(calls) : null;
        await quiet();
        const before = cpuMsOf(pid);
        const from = nowUs();
        const times = await run(v, c, calls, payments);
        const label = `${v} c=${c}`;
        windows.push({ label, from, to: nowUs() });
        const seen = got.get(label) ?? [];
        seen.push({ cpuUs: ((cpuMsOf(pid) - before) * 1000) / calls, p50: percentile(times, 50) });
        got.set(label, seen);
      }
    }
  }
  if (p.windowsFile) {
    mkdirSync(dirname(p.windowsFile), { recursive: true });
    writeFileSync(p.windowsFile, JSON.stringify(windows));
  }
  const of = (v: Variant, c: number) => got.get(`${v} c=${c}`) ?? [];
  const cpu = (v: Variant, c: number) => median(of(v, c).map((x) => x.cpuUs));
  return levels.flatMap(({ c }): Row[] => [
    {
      scenario: "x402 MCP",
      metric: `tools/call p50 c=${c}, paid (verification only) vs free (bare: free)`,
      unit: "ms",
      direct: null,
      bare: median(of("free", c).map((x) => x.p50)),
      gateway: median(of("paid", c).map((x) => x.p50)),
    },
    {
      scenario: "x402 MCP",
      metric: `tools/call proxy CPU per call c=${c}, paid (verification only) vs free (+${(cpu("paid", c) - cpu("free", c)).toFixed(0)} µs)`,
      unit: "µs",
      direct: null,
      bare: cpu("free", c),
      gateway: cpu("paid", c),
    },
  ]);
}
