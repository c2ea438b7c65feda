import { type LoadResult, type LoadSpec, load } from "./load.ts";
import { cpuMsOf, quiet } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

/** Where a step's calls go: straight to the upstream, through the bare Node proxy, through the gateway. */
export type Target = "direct" | "bare" | "gateway";
export const TARGETS: Target[] = ["direct", "bare", "gateway"];
/** Each round starts with a different target, so no one of them always runs first or last. */
export const order = (round: number) =>
  TARGETS.map((_, i) => TARGETS[(i + round) % TARGETS.length] as Target);

/**
 * The small-call step of `pnpm bench` (docs/performance.md): small bodies through the streaming
 * endpoint, each target at c=64 (throughput, latency, the proxy process's CPU per call) and at c=1
 * (the latency each proxy adds), rounds in rotating order after a warm-up.
 */
export async function streamRows(o: {
  spec: (t: Target, connections: number, seconds: number) => LoadSpec;
  /** The process whose CPU a target's calls cost (none for direct calls). */
  pid: (t: Target) => number | undefined;
  concurrency: number;
  seconds: number;
  latSeconds: number;
  rounds: number;
  vacuumed: () => Promise<void>;
}): Promise<Row[]> {
  await o.vacuumed();
  for (const t of TARGETS) await load(o.spec(t, o.concurrency, 1)); // warm-up: JIT, pools, caches
  const loaded: Record<Target, LoadResult[]> = { direct: [], bare: [], gateway: [] };
  const single: Record<Target, LoadResult[]> = { direct: [], bare: [], gateway: [] };
  // The proxy process's CPU per call under load (bare proxy and gateway), µs.
  const cpu: Record<Target, number[]> = { direct: [], bare: [], gateway: [] };
  for (let r = 0; r < o.rounds; r++) {
    for (const t of order(r)) {
      const p = o.pid(t);
      const before = p === undefined ? 0 : cpuMsOf(p);
      const res = await load(o.spec(t, o.concurrency, o.seconds));
      if (p !== undefined && res.requests > 0) cpu[t].push(((cpuMsOf(p) - before) * 1000) / res.requests);
      loaded[t].push(res);
      // A lone caller meets an idle gateway: the c=64 step's records and garbage are dealt with first.
      await quiet();
      single[t].push(await load(o.spec(t, 1, o.latSeconds)));
    }
  }
  const errors = TARGETS.flatMap((t) => [...loaded[t], ...single[t]]).reduce((n, x) => n + x.errors, 0);
  if (errors > 0) throw new Error(`small bodies: ${errors} failed requests`);
  const m = (set: Record<Target, LoadResult[]>, t: Target, k: "rps" | "p50" | "p99") =>
    median(set[t].map((x) => x[k]));
  const gwRps = m(loaded, "gateway", "rps");
  return [
    {
      scenario: "stream small",
      metric: `throughput c=${o.concurrency}`,
      unit: "req/s",
      direct: m(loaded, "direct", "rps"),
      bare: m(loaded, "bare", "rps"),
      gateway: gwRps,
      target: { text: ">= 0.75 x bare", met: gwRps >= 0.75 * m(loaded, "bare", "rps") },
    },
    {
      scenario: "stream small",
      metric: `proxy CPU per call c=${o.concurrency}`,
      unit: "µs",
      direct: null,
      bare: median(cpu.bare),
      gateway: median(cpu.gateway),
      target: { text: "<= 1.6 x bare", met: median(cpu.gateway) <= 1.6 * median(cpu.bare) },
    },
    ...(["p50", "p99"] as const).map((k) => ({
      scenario: "stream small",
      metric: `latency ${k} c=${o.concurrency}`,
      unit: "ms",
      direct: m(loaded, "direct", k),
      bare: m(loaded, "bare", k),
      gateway: m(loaded, "gateway", k),
    })),
    ...(["p50", "p99"] as const).map((k) => {
      const added = m(single, "gateway", k) - m(single, "direct", k);
      const bareAdded = m(single, "bare", k) - m(single, "direct", k);
      // Each round's own added figure, gateway and bare proxy: the spread the target is read against.
      const spread = (t: Target) => {
        const perRound = single[t].map((x, r) => x[k] - (single.direct[r]?.[k] ?? 0));
        return `${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)}`;
      };
      return {
        scenario: "stream small",
        metric: `latency ${k} c=1 (added: gateway ${added.toFixed(2)} [${spread("gateway")}], bare ${bareAdded.toFixed(2)} [${spread("bare")}] ms)`,
        unit: "ms",
        direct: m(single, "direct", k),
        bare: m(single, "bare", k),
        gateway: m(single, "gateway", k),
        // p50: at most 1 ms added; p99: at most 1 ms over the bare proxy's own (noise any Node proxy has).
        target:
          k === "p50"
            ? { text: "added p50 <= 1 ms", met: added <= 1 }
            : { text: "added p99 <= bare's + 1 ms", met: added <= bareAdded + 1 },
      };
    }),
  ];
}
