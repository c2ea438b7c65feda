import { compilePolicy, matchPolicy, PolicyDocument, type PolicyInput } from "@gw/policy";
import * as v from "valibot";
import { benchTenant, type Deployment } from "./deploy.ts";
import { load } from "./load.ts";
import { cpuMsOf, quiet } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

export type PolicyVariant = "none" | "rules" | "cel";
export const POLICY_VARIANTS: PolicyVariant[] = ["none", "rules", "cel"];

const CONDITIONS = [
  (i: number) => `"admin-${i}" in principal.scopes && call.body_bytes > 1000000`,
  (i: number) => `principal.sub == "mallory-${i}"`,
  (i: number) => `call.tool == "transfer-${i}" && call.arguments.amount > 100`,
  (i: number) => `has(principal.claims.groups) && "sre-${i}" in principal.claims.groups`,
  (i: number) => `agent.name.startsWith("prod-${i}") && call.mode == "streaming"`,
];

const DOCUMENTS: Record<Exclude<PolicyVariant, "none">, unknown> = {
  rules: {
    rules: Array.from({ length: 20 }, (_, i) => ({ action: "deny", match: { tools: [`tool-${i}`] } })),
  },
  cel: {
    rules: Array.from({ length: 20 }, (_, i) => ({
      action: "deny",
      when: (CONDITIONS[i % CONDITIONS.length] as (i: number) => string)(i),
    })),
  },
};

/** One tenant per variant, each with an echo agent (and its policy), for the same upstream path. */
export async function policyTenants(
  d: Deployment,
  echoPath: string,
): Promise<Record<PolicyVariant, { token: string; agentId: string }>> {
  const out = {} as Record<PolicyVariant, { token: string; agentId: string }>;
  for (const variant of POLICY_VARIANTS) {
    const { token, call } = await benchTenant(d, `policy-${variant}`);
    const agent = await call("POST", "/v1/agents", {
      name: "bench-echo",
      upstream_url: `${d.upstream}${echoPath}`,
    });
    if (variant !== "none") await call("PUT", "/v1/policy", DOCUMENTS[variant]);
    out[variant] = { token, agentId: agent.id as string };
  }
  return out;
}

/**
 * The evaluation alone, in this process: µs per call of matching the bench call against each
 * document (compiled once, as the proxy does). On a busy machine the proxy's CPU per call moves by
 * more than the condition cost between runs; this figure does not.
 */
export function evaluationMicros(): Record<Exclude<PolicyVariant, "none"> | "celOnly", number> {
  const claims = { sub: "bench", tenant_id: "bench", iat: 1, exp: 2 };
  const input = (): PolicyInput => ({
    tenantId: "bench",
    agentId: "agt_bench",
    protocol: "http",
    rpcMethod: null,
    mcpTool: null,
    model: null,
    bodySize: 30,
    principal: { sub: "bench", scopes: [], claims },
    agentName: "bench-echo",
    mode: "streaming",
    arguments: undefined,
  });
  const out = { rules: 0, cel: 0, celOnly: 0 };
  for (const variant of ["rules", "cel", "celOnly"] as const) {
    const compiled = compilePolicy(
      v.parse(PolicyDocument, DOCUMENTS[variant === "rules" ? "rules" : "cel"]),
      1,
    );
    // The same conditions all through CEL: what they cost without being read from the call directly.
    const policy =
      variant === "celOnly"
        ? {
            ...compiled,
            rules: compiled.rules.map((r) => ({ ...r, when: r.when && { ...r.when, direct: null } })),
          }
        : compiled;
    for (let i = 0; i < 20_000; i++) matchPolicy(policy, input());
    const runs: number[] = [];
    for (let r = 0; r < 5; r++) {
      const n = 50_000;
      const t0 = performance.now();
      for (let i = 0; i < n; i++) matchPolicy(policy, input());
      runs.push(((performance.now() - t0) * 1000) / n);
    }
    out[variant] = Math.min(...runs);
  }
  return out;
}

/**
 * The proxy's CPU per streaming call for each variant, one tenant each, rounds interleaved after a
 * warm-up, and the evaluation alone in process.
 */
export async function policyRows(
  d: Deployment,
  o: { path: string; body: string; concurrency: number; seconds: number; rounds: number },
): Promise<Row[]> {
  const tenants = await policyTenants(d, o.path);
  const policySpec = (v: PolicyVariant, seconds: number) => ({
    url: `${d.proxy}/v1/proxy/${tenants[v].agentId}/stream`,
    headers: { authorization: `Bearer ${tenants[v].token}`, "content-type": "application/json" },
    body: o.body,
    connections: o.concurrency,
    seconds,
  });
  for (const v of POLICY_VARIANTS) await load(policySpec(v, 1)); // warm-up: caches, JIT
  const perCall: Record<PolicyVariant, number[]> = { none: [], rules: [], cel: [] };
  const proxyPid = d.proxyProc.pid as number;
  for (let r = 0; r < o.rounds * 2; r++) {
    for (let i = 0; i < POLICY_VARIANTS.length; i++) {
      const v = POLICY_VARIANTS[(i + r) % POLICY_VARIANTS.length] as PolicyVariant;
      await quiet();
      const before = cpuMsOf(proxyPid);
      const res = await load(policySpec(v, o.seconds));
      if (res.errors > 0 || res.requests === 0) throw new Error(`policy ${v}: ${res.errors} failed requests`);
      perCall[v].push(((cpuMsOf(proxyPid) - before) * 1000) / res.requests);
    }
  }
  const none = median(perCall.none);
  const rules = median(perCall.rules);
  const cel = median(perCall.cel);
  const rows: Row[] = [
    {
      scenario: "stream policy",
      metric: "proxy CPU per call, no policy",
      unit: "µs",
      direct: null,
      bare: null,
      gateway: none,
    },
    {
      scenario: "stream policy",
      metric: `proxy CPU per call, 20 match rules (+${(rules - none).toFixed(1)} µs)`,
      unit: "µs",
      direct: null,
      bare: null,
      gateway: rules,
    },
    {
      scenario: "stream policy",
      metric: `proxy CPU per call, 20 CEL rules (+${(cel - none).toFixed(1)} µs vs none, +${(cel - rules).toFixed(1)} vs match rules)`,
      unit: "µs",
      direct: null,
      bare: null,
      gateway: cel,
      target: { text: "<= none + 15 µs", met: cel - none <= 15 },
    },
  ];
  const evaluation = evaluationMicros();
  rows.push({
    scenario: "stream policy",
    metric: `evaluation per call in-process, 20 CEL rules (all through CEL: ${evaluation.celOnly.toFixed(2)} µs; 20 match rules: ${evaluation.rules.toFixed(2)} µs)`,
    unit: "µs",
    direct: null,
    bare: null,
    gateway: evaluation.cel,
    target: { text: "<= 15 µs", met: evaluation.cel <= 15 },
  });
  return rows;
}
