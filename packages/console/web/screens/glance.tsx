// The overview's "last hour": what an operator opening the console wants first. Everything here
// comes from the public API (analytics, the invocation list, the approvals waiting for a person, the
// MCP agents' tool catalogs).
import { useAgentNames } from "../agent-names.tsx";
import { unwrap } from "../api.ts";
import { Table } from "../list/index.ts";
import { href } from "../router.ts";
import type { AnalyticsRow } from "../types.ts";
import { ErrorBox, fmtMs, fmtTime, RefreshButton, Status, useLoad, useSession } from "../ui.tsx";
import { DriftedTools } from "./drifted.tsx";

const HOUR_MS = 3600_000;
const FAILING_SHOWN = 5;

type AgentHour = { agent: string; calls: number; failed: number; p95: number | null };

/**
 * Per-agent totals over the hour (it may span two hourly buckets), for the agents failing most. An
 * agent's p95 is the higher of its buckets' p95s (an upper bound: percentiles do not add up). The
 * gateway-wide tiles come from /v1/analytics/summary, computed over the calls themselves.
 */
export function failingAgents(rows: AnalyticsRow[]) {
  const agents = new Map<string, AgentHour>();
  for (const r of rows) {
    const a = agents.get(r.agent_id) ?? { agent: r.agent_id, calls: 0, failed: 0, p95: null };
    a.calls += r.invocations;
    a.failed += r.failed;
    if (r.latency_ms_p95 !== null) a.p95 = Math.max(a.p95 ?? 0, r.latency_ms_p95);
    agents.set(r.agent_id, a);
  }
  return [...agents.values()]
    .filter((a) => a.failed > 0)
    .sort((x, y) => y.failed - x.failed || y.failed / y.calls - x.failed / x.calls)
    .slice(0, FAILING_SHOWN);
}

const pct = (failed: number, calls: number) =>
  calls ? `${(Math.round((failed / calls) * 1000) / 10).toString()} %` : "—";

function Tile(props: { label: string; value: string; hint?: string; testid: string }) {
  return (
    <div class="tile" data-testid={props.testid}>
      <div class="tile-label">{props.label}</div>
      <div class="tile-value">{props.value}</div>
      {props.hint ? <div class="tile-hint">{props.hint}</div> : null}
    </div>
  );
}

export function LastHour() {
  const { api, caps } = useSession();
  const names = useAgentNames();
  const since = () => new Date(Date.now() - HOUR_MS).toISOString();
  const stats = useLoad(
    () =>
      caps.surfaces.analytics
        ? Promise.all([
            unwrap(api.GET("/v1/analytics/summary", { params: { query: { since: since() } } })),
            unwrap(api.GET("/v1/analytics", { params: { query: { since: since(), bucket: "hour" } } })),
          ]).then(([total, perAgent]) => ({
            calls: total.invocations,
            failed: total.failed,
            p95: total.latency_ms_p95,
            failing: failingAgents(perAgent.data),
          }))
        : Promise.resolve(null),
    "analytics",
  );
  const failures = useLoad(
    () =>
      caps.surfaces.invocations
        ? unwrap(
            api.GET("/v1/invocations", { params: { query: { status: "failed", since: since(), limit: 5 } } }),
          )
        : Promise.resolve(null),
    "failures",
  );
  const pending = useLoad(
    () =>
      caps.surfaces.approvals
        ? unwrap(api.GET("/v1/approvals", { params: { query: { status: "pending", limit: 1 } } })).then(
            (a) => a.total,
          )
        : Promise.resolve(null),
    "pending-approvals",
  );
  const name = (id: string) => names.data?.get(id) ?? id;
  const s = stats.data;

  return (
    <section aria-labelledby="last-hour">
      <div class="section-head">
        <h2 id="last-hour">Last hour</h2>
        <RefreshButton
          onClick={() => {
            stats.reload();
            failures.reload();
            pending.reload();
          }}
        />
      </div>
      <ErrorBox message={stats.error ?? failures.error ?? pending.error} />
      {s ? (
        <div class="tiles">
          <Tile testid="tile-calls" label="Calls" value={String(s.calls)} />
          <Tile
            testid="tile-errors"
            label="Error rate"
            value={pct(s.failed, s.calls)}
            hint={`${s.failed} failed`}
          />
          <Tile testid="tile-p95" label="p95 latency" value={fmtMs(s.p95)} hint="all calls" />
          {pending.data !== null && pending.data !== undefined ? (
            <a class="tile-link" href={href("/approvals")}>
              <Tile
                testid="tile-approvals"
                label="Pending approvals"
                value={String(pending.data)}
                hint="calls waiting for a person"
              />
            </a>
          ) : null}
        </div>
      ) : null}
      {s === null && !stats.loading ? (
        <p class="empty">Analytics is not enabled on this deployment.</p>
      ) : null}
      {s ? (
        <>
          <h3>Agents failing most</h3>
          {s.failing.length === 0 ? (
            <p class="empty">No failed calls in the last hour.</p>
          ) : (
            <Table
              testid="failing-agents"
              rows={s.failing}
              rowKey={(a) => a.agent}
              rowProps={(a) => ({ "data-id": a.agent })}
              columns={[
                {
                  head: "Agent",
                  cell: (a) => (
                    <a href={href("/invocations", { agent_id: a.agent, status: "failed" })}>
                      {name(a.agent)}
                    </a>
                  ),
                },
                { head: "Failed", class: "num", cell: (a) => a.failed },
                { head: "Calls", class: "num", cell: (a) => a.calls },
                { head: "Error rate", class: "num", cell: (a) => pct(a.failed, a.calls) },
                { head: "p95", class: "num", cell: (a) => fmtMs(a.p95) },
              ]}
            />
          )}
        </>
      ) : null}
      <DriftedTools />
      {failures.data && failures.data.data.length > 0 ? (
        <>
          <h3>Latest failures</h3>
          <Table
            testid="latest-failures"
            rows={failures.data.data}
            rowKey={(r) => r.id}
            rowProps={(r) => ({ "data-id": r.id })}
            columns={[
              {
                head: "When",
                cell: (r) => <a href={href(`/invocations/${r.id}`)}>{fmtTime(r.created_at)}</a>,
              },
              { head: "Agent", cell: (r) => name(r.agent_id) },
              { head: "Status", cell: (r) => <Status value={r.status} /> },
              { head: "Why", cell: (r) => r.error_class ?? "—" },
              { head: "Upstream", class: "num", cell: (r) => r.upstream_status ?? "—" },
            ]}
          />
          <p>
            <a href={href("/invocations", { status: "failed" })}>All failed invocations</a>
          </p>
        </>
      ) : null}
    </section>
  );
}
