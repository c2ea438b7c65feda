import { protocolOf } from "@gw/forward";
import { benchTenant, type Deployment } from "./deploy.ts";
import { load } from "./load.ts";
import { cpuMsOf, quiet } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

/** The target of the A2A rows: an A2A SendMessage costs at most this much more than an http call. */
export const A2A_BUDGET_US = 10;

const message = { messageId: "bench", role: "ROLE_USER", parts: [{ text: "hello" }] };
export const A2A_BODIES = {
  send: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message } }),
  stream: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message } }),
};

/** A tenant with an `http` and an `a2a` agent on the bench upstream's A2A path. */
export async function a2aAgents(d: Deployment) {
  const { token, call } = await benchTenant(d, "a2a");
  const create = async (protocol: "http" | "a2a") =>
    (
      await call("POST", "/v1/agents", {
        name: `bench-${protocol}`,
        upstream_url: `${d.upstream}/a2a`,
        protocol,
      })
    ).id as string;
  return { token, http: await create("http"), a2a: await create("a2a") };
}

/**
 * µs of this process per call of what the a2a protocol adds in-process: the request's parse and
 * record fields, and the learner over the answer (the bench upstream's JSON task, or its four SSE
 * events as one chunk each). Steadier than the proxy's CPU per call on a busy machine.
 */
export function inProcessMicros(): { send: number; stream: number } {
  const a2a = protocolOf("a2a");
  const reply = (result: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 1, result });
  const task = { id: "task-bench", contextId: "ctx-bench", status: { state: "TASK_STATE_COMPLETED" } };
  const json = Buffer.from(
    reply({ task: { ...task, artifacts: [{ artifactId: "a", parts: [{ text: "hi" }] }] } }),
  );
  const events = [
    { task: { ...task, status: { state: "TASK_STATE_SUBMITTED" } } },
    { statusUpdate: { taskId: task.id, contextId: task.contextId, status: { state: "TASK_STATE_WORKING" } } },
    { artifactUpdate: { taskId: task.id, artifact: { artifactId: "a", parts: [{ text: "hi" }] } } },
    { statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } },
  ].map((e) => Buffer.from(`data: ${reply(e)}\n\n`));
  const one = (body: string, type: string, chunks: Buffer[]) => () => {
    const facts = a2a.parse(Buffer.from(body), {});
    a2a.recorded(facts);
    const learner = a2a.learn({ status: 200, headers: { "content-type": type } }, facts?.method ?? null);
    for (const c of chunks) learner?.add(c);
    return learner?.facts();
  };
  const time = (fn: () => unknown) => {
    for (let i = 0; i < 20_000; i++) fn();
    const runs: number[] = [];
    for (let r = 0; r < 5; r++) {
      const n = 50_000;
      const t0 = performance.now();
      for (let i = 0; i < n; i++) fn();
      runs.push(((performance.now() - t0) * 1000) / n);
    }
    return Math.min(...runs);
  };
  return {
    send: time(one(A2A_BODIES.send, "application/json", [json])),
    stream: time(one(A2A_BODIES.stream, "text/event-stream", events)),
  };
}

export async function a2aRows(
  d: Deployment,
  opts: { connections: number; seconds: number; rounds: number },
): Promise<Row[]> {
  const { token, ...agents } = await a2aAgents(d);
  const kinds = ["http", "a2a"] as const;
  const spec = (agent: (typeof kinds)[number], body: string, seconds: number) => ({
    url: `${d.proxy}/v1/proxy/${agents[agent]}/stream`,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "a2a-version": "1.0" },
    body,
    connections: opts.connections,
    seconds,
  });
  const proxyPid = d.proxyProc.pid as number;
  const rows: Row[] = [];
  for (const [name, body] of [
    ["A2A SendMessage", A2A_BODIES.send],
    ["A2A streamed task", A2A_BODIES.stream],
  ] as const) {
    for (const k of kinds) await load(spec(k, body, 1)); // warm-up
    const perCall: Record<(typeof kinds)[number], number[]> = { http: [], a2a: [] };
    const rps: Record<(typeof kinds)[number], number[]> = { http: [], a2a: [] };
    for (let r = 0; r < opts.rounds * 2; r++) {
      for (let i = 0; i < kinds.length; i++) {
        const k = kinds[(i + r) % kinds.length] as (typeof kinds)[number];
        await quiet();
        const before = cpuMsOf(proxyPid);
        const res = await load(spec(k, body, opts.seconds));
        if (res.errors > 0 || res.requests === 0)
          throw new Error(`${name} (${k}): ${res.errors} failed requests`);
        perCall[k].push(((cpuMsOf(proxyPid) - before) * 1000) / res.requests);
        rps[k].push(res.rps);
      }
    }
    const base = median(perCall.http);
    const added = median(perCall.a2a) - base;
    const spread = (k: (typeof kinds)[number]) =>
      `${Math.min(...perCall[k]).toFixed(0)}–${Math.max(...perCall[k]).toFixed(0)}`;
    rows.push(
      {
        scenario: name,
        metric: `proxy CPU per call c=${opts.connections}, http agent, same upstream and body [rounds ${spread("http")}]`,
        unit: "µs",
        direct: null,
        bare: null,
        gateway: base,
      },
      {
        scenario: name,
        metric: `proxy CPU per call c=${opts.connections}, a2a agent (${added >= 0 ? "+" : ""}${added.toFixed(1)} µs; ${median(rps.a2a).toFixed(0)} vs ${median(rps.http).toFixed(0)} req/s) [rounds ${spread("a2a")}]`,
        unit: "µs",
        direct: null,
        bare: null,
        gateway: median(perCall.a2a),
        target: { text: `<= http + ${A2A_BUDGET_US} µs`, met: added <= A2A_BUDGET_US },
      },
    );
  }
  const micros = inProcessMicros();
  rows.push({
    scenario: "A2A SendMessage",
    metric: `the a2a protocol in-process: parse, record fields, learning from the answer (streamed task: ${micros.stream.toFixed(2)} µs)`,
    unit: "µs",
    direct: null,
    bare: null,
    gateway: micros.send,
    target: { text: `<= ${A2A_BUDGET_US} µs`, met: micros.send <= A2A_BUDGET_US },
  });
  return rows;
}
