import { unwrap } from "../api.ts";
import { FilterButtons, TimeRange } from "../filters.tsx";
import { navigate, useRoute } from "../router.ts";
import type { PolicyDecision } from "../types.ts";
import {
  ErrorBox,
  fmtTime,
  formValues,
  Pager,
  Picker,
  Status,
  toRfc3339,
  useLoad,
  useSession,
} from "../ui.tsx";
import { useAgentNames } from "./invocations.tsx";

export function Decisions() {
  const { api } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const query = {
    ...present("action", route.query.get("action") as PolicyDecision["action"] | null),
    ...present("agent_id", route.query.get("agent_id")),
    ...present("since", route.query.get("since")),
    ...present("until", route.query.get("until")),
  };
  const offset = Number(route.query.get("offset") ?? 0) || 0;
  const list = useLoad(
    () => unwrap(api.GET("/v1/policy/decisions", { params: { query: { ...query, offset, limit: 20 } } })),
    route.query.toString(),
  );
  return (
    <section aria-labelledby="decisions-title">
      <h2 id="decisions-title">Decisions</h2>
      <form
        class="filters"
        aria-label="Decision filters"
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          navigate("/policy", { ...v, since: toRfc3339(v.since), until: toRfc3339(v.until) });
        }}
      >
        <label>
          Action
          <Picker name="action" initial={query.action ?? ""} key={query.action}>
            <option value="">any</option>
            <option value="allow">allow</option>
            <option value="warn">warn</option>
            <option value="deny">deny</option>
          </Picker>
        </label>
        <label>
          Agent
          <Picker
            name="agent_id"
            initial={query.agent_id ?? ""}
            key={`${query.agent_id}-${names.data?.size}`}
          >
            <option value="">any</option>
            {[...(names.data ?? new Map<string, string>())].map(([id, name]) => (
              <option key={id} value={id}>
                {name}
              </option>
            ))}
          </Picker>
        </label>
        <TimeRange since={route.query.get("since")} until={route.query.get("until")} />
        <FilterButtons path="/policy" />
      </form>
      <ErrorBox message={list.error} />
      {list.data ? (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Protocol</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Action</th>
                  <th scope="col">Rule</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((d) => (
                  <tr key={d.id}>
                    <td>{fmtTime(d.created_at)}</td>
                    <td>{names.data?.get(d.agent_id) ?? <code class="small">{d.agent_id}</code>}</td>
                    <td>{d.protocol}</td>
                    <td>{d.mcp_tool ?? "—"}</td>
                    <td>
                      <Status value={d.action} />
                    </td>
                    <td>{d.matched_rule || "default"}</td>
                    <td>{d.reason ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {list.data.total === 0 ? <p class="empty">No decisions match.</p> : null}
          <Pager path="/policy" query={query} {...list.data} />
        </>
      ) : null}
    </section>
  );
}

/** `{[key]: value}` when the URL carries the filter, else nothing (absent, not undefined). */
function present<K extends string, V>(key: K, value: V | null): { [k in K]?: V } {
  return value === null || value === "" ? {} : ({ [key]: value } as { [k in K]: V });
}
