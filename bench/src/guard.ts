import { benchTenant, type Deployment } from "./deploy.ts";
import { type LoadResult, load } from "./load.ts";
import { cpuMsOf, quiet } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

type Variant = "unguarded" | "guarded";

const POLICY = {
  answer_rules: [
    {
      detect: {
        secrets: true,
        pii: ["email", "phone", "credit_card", "iban", "us_ssn", "ip_address"],
        patterns: ["ACME-[0-9]{6}", "(?i)confidential", "internal\\.example\\.net"],
      },
      action: "redact",
    },
  ],
};

export const GUARD_CALL = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "report", arguments: {} },
});

const KIB = 4;

const A2A_STREAM = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "SendStreamingMessage",
  params: { message: { messageId: "bench", role: "ROLE_USER", parts: [{ text: "hello" }] } },
});

export async function tenantWith(d: Deployment, variant: Variant) {
  const { token, call } = await benchTenant(d, `guard-${variant}`);
  const agent = await call("POST", "/v1/agents", {
    name: "bench-guard",
    upstream_url: `${d.upstream}/mcp?answer=4k`,
    protocol: "mcp",
    mcp_transport: "streamable_http",
  });
  const a2a = await call("POST", "/v1/agents", {
    name: "bench-guard-a2a",
    upstream_url: `${d.upstream}/a2a`,
    protocol: "a2a",
  });
  // Both tenants have a policy, so the difference is the answer guard alone: a tenant without
  // any policy skips the request's policy decision and its record, which are not the guard's.
  await call("PUT", "/v1/policy", variant === "guarded" ? POLICY : {});
  return { token, agentId: agent.id as string, a2aId: a2a.id as string };
}

type Tenants = Record<Variant, Awaited<ReturnType<typeof tenantWith>>>;
type Measured = Record<Variant, { res: LoadResult; cpuUs: number }[]>;

/** Both variants' calls, rounds interleaved (order alternating), proxy CPU per call of each round. */
async function measure(
  d: Deployment,
  p: { rounds: number; seconds: number },
  run: (v: Variant, seconds: number) => Promise<LoadResult>,
): Promise<Measured> {
  for (const v of ["unguarded", "guarded"] as const) await run(v, 1); // warm-up: caches, JIT
  const got: Measured = { unguarded: [], guarded: [] };
  const pid = d.proxyProc.pid as number;
  for (let r = 0; r < p.rounds * 2; r++) {
    for (const v of r % 2 === 0 ? (["unguarded", "guarded"] as const) : (["guarded", "unguarded"] as const)) {
      await quiet();
      const before = cpuMsOf(pid);
      const res = await run(v, p.seconds);
      if (res.errors > 0 || res.requests === 0)
        throw new Error(`answer guard ${v}: ${res.errors} failed requests`);
      got[v].push({ res, cpuUs: ((cpuMsOf(pid) - before) * 1000) / res.requests });
    }
  }
  return got;
}

/** The A2A row: a streamed task of four events, relayed unread against judged event by event. */
async function a2aStreamRow(
  d: Deployment,
  tenants: Tenants,
  p: { rounds: number; seconds: number },
): Promise<Row> {
  const got = await measure(d, p, (v, seconds) =>
    load({
      url: `${d.proxy}/v1/proxy/${tenants[v].a2aId}/stream`,
      headers: {
        authorization: `Bearer ${tenants[v].token}`,
        "content-type": "application/json",
        "a2a-version": "1.0",
        accept: "text/event-stream",
      },
      body: A2A_STREAM,
      connections: 1,
      seconds,
    }),
  );
  const cpu = (v: Variant) => median(got[v].map((x) => x.cpuUs));
  const added = cpu("guarded") - cpu("unguarded");
  return {
    scenario: "answer guard",
    metric: `A2A streamed task (4 events) proxy CPU per call, judged event by event (+${added.toFixed(0)} µs, ${(added / 4).toFixed(0)} µs per event)`,
    unit: "µs",
    direct: null,
    bare: cpu("unguarded"),
    gateway: cpu("guarded"),
  };
}

/** The bare Node proxy's CPU per call relaying the same 4 KiB tools/call, the median of the rounds. */
async function bareProxyCpu(d: Deployment, p: { rounds: number; seconds: number }): Promise<number> {
  const pid = d.bareProc.pid as number;
  const spec = {
    url: `${d.bare}/mcp?answer=4k`,
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: GUARD_CALL,
    connections: 1,
  };
  await load({ ...spec, seconds: 1 }); // warm-up
  const perCall: number[] = [];
  for (let r = 0; r < p.rounds; r++) {
    await quiet();
    const before = cpuMsOf(pid);
    const res = await load({ ...spec, seconds: p.seconds });
    if (res.errors > 0 || res.requests === 0) throw new Error(`bare proxy: ${res.errors} failed requests`);
    perCall.push(((cpuMsOf(pid) - before) * 1000) / res.requests);
  }
  return median(perCall);
}

export async function answerGuardRows(d: Deployment, p: { rounds: number; seconds: number }): Promise<Row[]> {
  const tenants = { unguarded: await tenantWith(d, "unguarded"), guarded: await tenantWith(d, "guarded") };
  const run = (v: Variant, seconds: number) =>
    load({
      url: `${d.proxy}/v1/proxy/${tenants[v].agentId}/stream`,
      headers: {
        authorization: `Bearer ${tenants[v].token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: GUARD_CALL,
      connections: 1,
      seconds,
    });
  const got = await measure(d, p, run);
  const cpu = (v: Variant) => median(got[v].map((x) => x.cpuUs));
  const added = cpu("guarded") - cpu("unguarded");
  const bare = await bareProxyCpu(d, p);
  const perKib = added / KIB / bare;
  return [
    {
      scenario: "answer guard",
      metric: "4 KiB tools/call p50 c=1 (bare: a policy without answer rules, relayed unread)",
      unit: "ms",
      direct: null,
      bare: median(got.unguarded.map((x) => x.res.p50)),
      gateway: median(got.guarded.map((x) => x.res.p50)),
    },
    {
      scenario: "answer guard",
      metric: `4 KiB tools/call proxy CPU per call, secrets + 6 PII + 3 patterns (+${added.toFixed(0)} µs, ${(added / KIB).toFixed(0)} µs per KiB)`,
      unit: "µs",
      direct: null,
      bare: cpu("unguarded"),
      gateway: cpu("guarded"),
    },
    {
      scenario: "answer guard",
      metric: `guard CPU per KiB guarded, as a share of the bare Node proxy's CPU per call (the same 4 KiB call: ${bare.toFixed(0)} µs)`,
      unit: "×",
      direct: null,
      bare: null,
      gateway: perKib,
      target: { text: "<= 0.15x", met: perKib <= 0.15 },
    },
    await a2aStreamRow(d, tenants, p),
  ];
}
