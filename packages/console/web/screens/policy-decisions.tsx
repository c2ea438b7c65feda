import { AgentName, AgentPicker, useAgentNames } from "../agent-names.tsx";
import { unwrap } from "../api.ts";
import { FilterBar, FilterPicker, filtersOf, PagedTable, TimeRange, usePage } from "../list/index.ts";
import { useRoute } from "../router.ts";
import type { PolicyDecision } from "../types.ts";
import { fmtTime, Status, useSession } from "../ui.tsx";

const FILTERS = ["action", "agent_id", "since", "until"] as const;
const ACTIONS = ["allow", "warn", "deny"] as const;

export function Decisions() {
  const { api } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const query = filtersOf(route.query, FILTERS);
  const list = usePage(
    (page) =>
      unwrap(
        api.GET("/v1/policy/decisions", {
          // As typed in the URL: the API judges the value.
          params: { query: { ...query, action: query.action as PolicyDecision["action"], ...page } },
        }),
      ),
    route.query.toString(),
  );
  return (
    <section aria-labelledby="decisions-title">
      <h2 id="decisions-title">Decisions</h2>
      <FilterBar label="Decision filters" path="/policy">
        <FilterPicker label="Action" name="action" value={query.action} any choices={ACTIONS} />
        <AgentPicker value={query.agent_id} names={names.data} />
        <TimeRange since={query.since} until={query.until} />
      </FilterBar>
      <PagedTable
        list={list}
        rowKey={(d) => d.id}
        columns={[
          { head: "Time", cell: (d) => fmtTime(d.created_at) },
          { head: "Agent", cell: (d) => <AgentName id={d.agent_id} names={names.data} /> },
          { head: "Protocol", cell: (d) => d.protocol },
          { head: "Tool", cell: (d) => d.mcp_tool ?? "—" },
          { head: "Action", cell: (d) => <Status value={d.action} /> },
          { head: "Rule", cell: (d) => d.matched_rule || "default" },
          { head: "Reason", cell: (d) => d.reason ?? "—" },
        ]}
        empty="No decisions match."
        path="/policy"
        query={query}
      />
    </section>
  );
}
