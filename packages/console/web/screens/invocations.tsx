import { Fragment } from "preact";
import { unwrap } from "../api.ts";
import { FilterButtons, TimeRange } from "../filters.tsx";
import { href, navigate, useRoute } from "../router.ts";
import type { Invocation } from "../types.ts";
import {
  ErrorBox,
  fmtMs,
  fmtTime,
  formValues,
  Page,
  Pager,
  Picker,
  Status,
  toRfc3339,
  useLoad,
  useSession,
} from "../ui.tsx";
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

/** Agent id → name for the tenant's agents (first 100), for readable tables and filter choices. */
export function useAgentNames() {
  const { api } = useSession();
  return useLoad(
    () =>
      unwrap(api.GET("/v1/agents", { params: { query: { limit: 100 } } })).then(
        (l) => new Map(l.data.map((a) => [a.id, a.name])),
      ),
    "agent-names",
  );
}

function InvocationList() {
  const { api } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const query: Record<string, string | undefined> = {};
  for (const f of FILTERS) query[f] = route.query.get(f) ?? undefined;
  const offset = Number(route.query.get("offset") ?? 0) || 0;
  const key = `${route.query.toString()}`;
  const list = useLoad(
    () => unwrap(api.GET("/v1/invocations", { params: { query: { ...query, offset, limit: 20 } } })),
    key,
  );

  return (
    <Page
      title="Invocations"
      actions={
        <button type="button" class="secondary" onClick={list.reload}>
          Refresh
        </button>
      }
    >
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          navigate("/invocations", { ...v, since: toRfc3339(v.since), until: toRfc3339(v.until) });
        }}
      >
        <Select name="status" value={query.status} options={["pending", "running", "succeeded", "failed"]} />
        <Select name="mode" value={query.mode} options={["transactional", "streaming"]} />
        <Select
          name="settlement"
          value={query.settlement}
          options={["pending", "settled", "settlement_failed", "settled_upstream_failed"]}
        />
        <Select name="policy" value={query.policy} options={["allow", "warn"]} />
        <label>
          Agent
          <Picker
            name="agent_id"
            initial={query.agent_id ?? ""}
            key={`a-${query.agent_id}-${names.data?.size}`}
          >
            <option value="">any</option>
            {[...(names.data ?? new Map<string, string>())].map(([id, name]) => (
              <option key={id} value={id}>
                {name}
              </option>
            ))}
            {query.agent_id && !names.data?.has(query.agent_id) ? (
              <option value={query.agent_id}>{query.agent_id}</option>
            ) : null}
          </Picker>
        </label>
        <label>
          Method
          <input
            type="text"
            name="method"
            defaultValue={query.method ?? ""}
            key={query.method}
            placeholder="e.g. tools/call"
          />
        </label>
        <label>
          Tool
          <input type="text" name="tool" defaultValue={query.tool ?? ""} key={query.tool} />
        </label>
        <TimeRange since={query.since} until={query.until} />
        <FilterButtons path="/invocations" />
      </form>
      <ErrorBox message={list.error} />
      {list.data ? (
        <>
          <InvocationTable rows={list.data.data} names={names.data} filters={query} />
          {list.data.total === 0 ? <p class="empty">No invocations match.</p> : null}
          <Pager path="/invocations" query={query} {...list.data} />
        </>
      ) : null}
    </Page>
  );
}

function Select(props: { name: string; value: string | undefined; options: string[] }) {
  return (
    <label>
      {props.name[0]?.toUpperCase()}
      {props.name.slice(1)}
      <Picker name={props.name} initial={props.value ?? ""} key={props.value}>
        <option value="">any</option>
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </Picker>
    </label>
  );
}

/** The list's rows; a row's call links to the list under `filters` narrowed to calls alike. */
export function InvocationTable(props: {
  rows: Invocation[];
  names: Map<string, string> | undefined;
  filters?: Record<string, string | undefined>;
}) {
  return (
    <div class="table-wrap">
      <table data-testid="invocations">
        <thead>
          <tr>
            <th scope="col">Invocation</th>
            <th scope="col">Agent</th>
            <th scope="col" class="opt">
              Call
            </th>
            <th scope="col" class="opt">
              Mode
            </th>
            <th scope="col">Status</th>
            <th scope="col" class="opt">
              Upstream
            </th>
            <th scope="col">Latency</th>
            <th scope="col" class="opt">
              Created
            </th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr key={r.id} data-id={r.id}>
              <td>
                <a href={href(`/invocations/${r.id}`)} class="mono" title={r.id}>
                  …{r.id.slice(-12)}
                </a>
              </td>
              <td>
                <AgentName id={r.agent_id} names={props.names} />
                {r.routed_agent_id ? (
                  <span class="small">
                    {" "}
                    via <AgentName id={r.routed_agent_id} names={props.names} />
                  </span>
                ) : null}
                <CalledOnPhone row={r} />
              </td>
              <td class="opt" data-testid="call">
                <Called row={r} filters={props.filters ?? {}} />
              </td>
              <td class="opt">{r.mode}</td>
              <td>
                <Status value={r.status} />
                {r.error_class ? <span class="small"> {r.error_class}</span> : null}
                {r.answer_action ? (
                  <span class="small" title={`answer findings: ${JSON.stringify(r.answer_findings ?? {})}`}>
                    {" "}
                    answer {r.answer_action}
                  </span>
                ) : null}
              </td>
              <td class="opt">{r.upstream_status ?? "—"}</td>
              <td class="num">{fmtMs(r.latency_ms)}</td>
              <td class="opt">{fmtTime(r.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AgentName({ id, names }: { id: string; names: Map<string, string> | undefined }) {
  return <>{names?.get(id) ?? <code class="small">{id}</code>}</>;
}

/**
 * The method and tool a call invoked, linked to the list of the calls alike (the current filters
 * with this method and tool); an http call has neither, and shows the model it named, if any.
 */
function Called({ row, filters }: { row: Invocation; filters: Record<string, string | undefined> }) {
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
