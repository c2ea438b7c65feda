import { useMemo } from "preact/hooks";
import { unwrap } from "../api.ts";
import { Chart, type Series } from "../chart.tsx";
import { navigate, useRoute } from "../router.ts";
import type { AnalyticsRow } from "../types.ts";
import { ErrorBox, fmtMs, NotEnabled, Page, useLoad, useSession } from "../ui.tsx";
import { useAgentNames } from "./invocations.tsx";

/** Windows offered: all within the API's 31-day limit; hourly buckets up to a week. */
export const WINDOWS: Record<string, { hours: number; bucket: "hour" | "day"; label: string }> = {
  "24h": { hours: 24, bucket: "hour", label: "Last 24 hours" },
  "7d": { hours: 24 * 7, bucket: "hour", label: "Last 7 days" },
  "30d": { hours: 24 * 30, bucket: "day", label: "Last 30 days" },
};

export function windowOf(key: string | null) {
  const w = WINDOWS[key ?? "24h"] ?? WINDOWS["24h"];
  if (!w) throw new Error("no windows");
  const until = new Date();
  const since = new Date(until.getTime() - w.hours * 3600_000);
  return { ...w, since: since.toISOString(), until: until.toISOString() };
}

/** The window picker of the screens that read a time window (analytics, agent events). */
export function WindowSelect(props: { value: string; onChange: (key: string) => void }) {
  return (
    <label>
      Window
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {Object.entries(WINDOWS).map(([k, w]) => (
          <option key={k} value={k}>
            {w.label}
          </option>
        ))}
      </select>
    </label>
  );
}

export function AnalyticsScreen() {
  const { caps } = useSession();
  if (!caps.surfaces.analytics) return <NotEnabled what="Analytics" />;
  return <Analytics />;
}

function Analytics() {
  const { api } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const win = route.query.get("window") ?? "24h";
  const agentId = route.query.get("agent_id") ?? "";
  const res = useLoad(() => {
    const w = windowOf(win);
    return unwrap(
      api.GET("/v1/analytics", {
        params: { query: { since: w.since, until: w.until, bucket: w.bucket, agent_id: agentId } },
      }),
    );
  }, `${win}|${agentId}`);
  // The x axis spans the window asked for, recomputed with each load.
  const range = useMemo((): [number, number] => {
    const w = windowOf(win);
    return [Date.parse(w.since) / 1000, Date.parse(w.until) / 1000];
  }, [res.data, win]);
  const charts = useMemo(
    () => (res.data ? shape(res.data.data, agentId, names.data) : null),
    [res.data, names.data, agentId],
  );

  return (
    <Page
      title="Analytics"
      actions={
        <button type="button" class="secondary" onClick={res.reload}>
          Refresh
        </button>
      }
    >
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <WindowSelect
          value={win}
          onChange={(w) => navigate("/analytics", { window: w, agent_id: agentId })}
        />
        <label>
          Agent
          <select
            value={agentId}
            onChange={(e) => navigate("/analytics", { window: win, agent_id: e.currentTarget.value })}
          >
            <option value="">all agents</option>
            {[...(names.data ?? new Map<string, string>())].map(([id, name]) => (
              <option key={id} value={id}>
                {name}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox message={res.error} />
      {charts && charts.x.length === 0 ? <p class="empty">No invocations in this window.</p> : null}
      {charts && charts.x.length > 0 ? (
        <>
          <div class="charts">
            <Chart
              range={range}
              title="Throughput"
              unit="calls / bucket"
              x={charts.x}
              series={charts.throughput}
            />
            <Chart
              range={range}
              title="Error rate"
              unit="failed / calls"
              x={charts.x}
              series={charts.errorRate}
            />
            <Chart range={range} title="Latency" unit="ms" x={charts.x} series={charts.latency} />
          </div>
          <h2>Totals in the window</h2>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Calls</th>
                  <th scope="col">Failed</th>
                  <th scope="col">Worst p95</th>
                  <th scope="col">Settled</th>
                </tr>
              </thead>
              <tbody>
                {charts.totals.map((t) => (
                  <tr key={t.agent}>
                    <td>{t.name}</td>
                    <td class="num">{t.calls}</td>
                    <td class="num">{t.failed}</td>
                    <td class="num">{fmtMs(t.p95)}</td>
                    <td class="num mono">{t.settled}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </Page>
  );
}

/**
 * Rows (one per agent per bucket) → aligned uPlot series. One agent selected: its p50/p95/p99;
 * all agents: one line per agent, latency as p95.
 */
export function shape(rows: AnalyticsRow[], agentId: string, names: Map<string, string> | undefined) {
  const xs = [...new Set(rows.map((r) => Date.parse(r.bucket_start) / 1000))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const agents = [...new Set(rows.map((r) => r.agent_id))];
  const empty = () => xs.map((): number | null => null);
  const label = (id: string) => names?.get(id) ?? id;
  const throughput: Series[] = [];
  const errorRate: Series[] = [];
  const latency: Series[] = [];
  const totals = [];
  for (const agent of agents) {
    const calls = empty();
    const errors = empty();
    const p50 = empty();
    const p95 = empty();
    const p99 = empty();
    let total = 0;
    let failed = 0;
    let worst: number | null = null;
    let settled = 0n;
    for (const r of rows) {
      if (r.agent_id !== agent) continue;
      const i = at.get(Date.parse(r.bucket_start) / 1000);
      if (i === undefined) continue;
      calls[i] = r.invocations;
      errors[i] = r.invocations ? Math.round((r.failed / r.invocations) * 1000) / 10 : 0;
      p50[i] = r.latency_ms_p50;
      p95[i] = r.latency_ms_p95;
      p99[i] = r.latency_ms_p99;
      total += r.invocations;
      failed += r.failed;
      if (r.latency_ms_p95 !== null) worst = Math.max(worst ?? 0, r.latency_ms_p95);
      if (/^[0-9]+$/.test(r.settled_amount)) settled += BigInt(r.settled_amount);
    }
    throughput.push({ label: label(agent), values: calls });
    errorRate.push({ label: label(agent), values: errors });
    if (agentId) {
      latency.push(
        { label: "p50", values: p50 },
        { label: "p95", values: p95 },
        { label: "p99", values: p99 },
      );
    } else latency.push({ label: `${label(agent)} p95`, values: p95 });
    totals.push({ agent, name: label(agent), calls: total, failed, p95: worst, settled: settled.toString() });
  }
  return { x: xs, throughput, errorRate, latency, totals };
}
