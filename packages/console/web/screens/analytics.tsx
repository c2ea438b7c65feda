import { useMemo } from "preact/hooks";
import { agentChoices, useAgentNames } from "../agent-names.tsx";
import { unwrap } from "../api.ts";
import { Chart, type Series } from "../chart.tsx";
import { FilterBar, FilterSelect, Table } from "../list/index.ts";
import { navigate, useRoute } from "../router.ts";
import type { AnalyticsRow } from "../types.ts";
import { ErrorBox, fmtMs, Page, useLoad, useSession } from "../ui.tsx";

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
    <FilterSelect
      label="Window"
      value={props.value}
      choices={Object.entries(WINDOWS).map(([k, w]) => [k, w.label] as const)}
      onChange={props.onChange}
    />
  );
}

export function AnalyticsScreen() {
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
    <Page title="Analytics" refresh={res.reload}>
      <FilterBar>
        <WindowSelect
          value={win}
          onChange={(w) => navigate("/analytics", { window: w, agent_id: agentId })}
        />
        <FilterSelect
          label="Agent"
          value={agentId}
          any="all agents"
          choices={agentChoices(names.data)}
          onChange={(a) => navigate("/analytics", { window: win, agent_id: a })}
        />
      </FilterBar>
      <ErrorBox message={res.error} />
      {charts && charts.x.length === 0 ? <p class="empty">No invocations in this window.</p> : null}
      {charts && charts.x.length > 0 ? (
        <>
          <div class="charts">
            {(
              [
                ["Throughput", "calls / bucket", charts.throughput],
                ["Error rate", "failed / calls", charts.errorRate],
                ["Latency", "ms", charts.latency],
              ] as const
            ).map(([title, unit, series]) => (
              <Chart key={title} range={range} title={title} unit={unit} x={charts.x} series={series} />
            ))}
          </div>
          <h2>Totals in the window</h2>
          <Table
            rows={charts.totals}
            rowKey={(t) => t.agent}
            columns={[
              { head: "Agent", cell: (t) => t.name },
              { head: "Calls", cellClass: "num", cell: (t) => t.calls },
              { head: "Failed", cellClass: "num", cell: (t) => t.failed },
              { head: "Worst p95", cellClass: "num", cell: (t) => fmtMs(t.p95) },
              { head: "Settled", cellClass: "num mono", cell: (t) => t.settled },
            ]}
          />
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
