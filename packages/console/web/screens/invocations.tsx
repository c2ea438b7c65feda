import { Fragment } from "preact";
import { AgentName, AgentPicker, type Names, useAgentNames } from "../agent-names.tsx";
import { unwrap } from "../api.ts";
import {
  type Choices,
  type Column,
  FilterBar,
  FilterPicker,
  FilterText,
  filtersOf,
  PagedTable,
  type Query,
  TimeRange,
  usePage,
} from "../list/index.ts";
import { href, useRoute } from "../router.ts";
import type { Invocation } from "../types.ts";
import { fmtMs, fmtTime, Page, Status, useSession } from "../ui.tsx";
import { InvocationDetail } from "./invocation-detail.tsx";

/** The invocation list filters (docs/interface.md), in the order the form shows them. */
const FILTERS = [
  "status",
  "mode",
  "settlement",
  "policy",
  "agent_id",
  "method",
  "tool",
  "since",
  "until",
] as const;

/** The filters picked from the API's values, with those values. */
const PICKED: ReadonlyArray<readonly [string, "status" | "mode" | "settlement" | "policy", Choices]> = [
  ["Status", "status", ["pending", "running", "succeeded", "failed"]],
  ["Mode", "mode", ["transactional", "streaming"]],
  ["Settlement", "settlement", ["pending", "settled", "settlement_failed", "settled_upstream_failed"]],
  ["Policy", "policy", ["allow", "warn"]],
];

/**
 * What a call invoked, as its record says: the JSON-RPC method whatever the protocol (MCP's or
 * A2A's, the list's `method` filter) and an MCP tool (`tool`); both null for an http call.
 */
function calledOf(r: Invocation): { method: string | null; tool: string | null } {
  return { method: r.mcp_method ?? r.a2a_method, tool: r.mcp_tool };
}

export function InvocationsScreen() {
  const route = useRoute();
  const id = route.segments[1];
  return id ? <InvocationDetail id={id} /> : <InvocationList />;
}

function InvocationList() {
  const { api } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const query = filtersOf(route.query, FILTERS);
  const list = usePage(
    // As typed in the URL: the API judges the values.
    (page) => unwrap(api.GET("/v1/invocations", { params: { query: { ...(query as Query), ...page } } })),
    route.query.toString(),
  );

  return (
    <Page title="Invocations" refresh={list.reload}>
      <FilterBar label="Filters" path="/invocations">
        {PICKED.map(([label, name, choices]) => (
          <FilterPicker key={name} label={label} name={name} value={query[name]} any choices={choices} />
        ))}
        <AgentPicker value={query.agent_id} names={names.data} keepUnknown />
        <FilterText label="Method" name="method" value={query.method} placeholder="e.g. tools/call" />
        <FilterText label="Tool" name="tool" value={query.tool} />
        <TimeRange since={query.since} until={query.until} />
      </FilterBar>
      <PagedTable
        list={list}
        testid="invocations"
        rowKey={(r) => r.id}
        rowProps={(r) => ({ "data-id": r.id })}
        columns={invocationColumns(names.data, query)}
        empty="No invocations match."
        path="/invocations"
        query={query}
      />
    </Page>
  );
}

/** The list's columns; a row's call links to the list under `filters` narrowed to calls alike. */
function invocationColumns(names: Names, filters: Query): Column<Invocation>[] {
  return [
    {
      head: "Invocation",
      cell: (r) => (
        <a href={href(`/invocations/${r.id}`)} class="mono" title={r.id}>
          …{r.id.slice(-12)}
        </a>
      ),
    },
    {
      head: "Agent",
      cell: (r) => (
        <>
          <AgentName id={r.agent_id} names={names} />
          {r.routed_agent_id ? (
            <span class="small">
              {" "}
              via <AgentName id={r.routed_agent_id} names={names} />
            </span>
          ) : null}
          <CalledOnPhone row={r} />
        </>
      ),
    },
    { head: "Call", class: "opt", testid: "call", cell: (r) => <Called row={r} filters={filters} /> },
    { head: "Mode", class: "opt", cell: (r) => r.mode },
    {
      head: "Status",
      cell: (r) => (
        <>
          <Status value={r.status} />
          {r.error_class ? <span class="small"> {r.error_class}</span> : null}
          {r.answer_action ? (
            <span class="small" title={`answer findings: ${JSON.stringify(r.answer_findings ?? {})}`}>
              {" "}
              answer {r.answer_action}
            </span>
          ) : null}
        </>
      ),
    },
    { head: "Upstream", class: "opt", cell: (r) => r.upstream_status ?? "—" },
    { head: "Latency", cellClass: "num", cell: (r) => fmtMs(r.latency_ms) },
    { head: "Created", class: "opt", cell: (r) => fmtTime(r.created_at) },
  ];
}

/**
 * The method and tool a call invoked, linked to the list of the calls alike (the current filters
 * with this method and tool); an http call has neither, and shows the model it named, if any.
 */
function Called({ row, filters }: { row: Invocation; filters: Query }) {
  const { method, tool } = calledOf(row);
  if (method === null) return row.model ? <span class="small">model {row.model}</span> : <>—</>;
  const alike = tool === null ? method : `${method} ${tool}`;
  return (
    <a
      class="call"
      href={href("/invocations", { ...filters, method, tool: tool ?? undefined })}
      title={`Only the ${alike} calls`}
    >
      <code>{method}</code>
      {tool === null ? null : (
        <>
          {" "}
          <code>{tool}</code>
        </>
      )}
    </a>
  );
}

/**
 * At phone width the Call column gives way (status and latency stay in view) and the call reads
 * under the agent's name instead, unlinked; hidden at other widths, so it is never read twice.
 */
function CalledOnPhone({ row }: { row: Invocation }) {
  const { method, tool } = calledOf(row);
  if (method === null) return null;
  return (
    <span class="phone-only small" data-testid="call-phone">
      <br />
      <code>{breakable(tool === null ? method : `${method} ${tool}`)}</code>
    </span>
  );
}

/** The text with a line break allowed after each `/` (`tools/` `call`), where it reads best. */
function breakable(text: string) {
  return text.split("/").map((part, i) => (
    <Fragment key={i}>
      {i > 0 ? (
        <>
          /<wbr />
        </>
      ) : null}
      {part}
    </Fragment>
  ));
}
