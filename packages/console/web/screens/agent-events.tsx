import { agentChoices, useAgentNames } from "../agent-names.tsx";
import { unwrap } from "../api.ts";
import { FilterBar, FilterSelect } from "../list/index.ts";
import { navigate, useRoute } from "../router.ts";
import { ErrorBox, Fields, fmtMs, fmtTime, Page, useLoad, useSession } from "../ui.tsx";
import { WindowSelect, windowOf } from "./analytics.tsx";

/** One agent's summary of its agent events (sessions, tool calls, tokens, cost) over a window. */
export function AgentEventsScreen() {
  const { api } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const win = route.query.get("window") ?? "24h";
  const chosen = route.query.get("agent_id") ?? "";
  const agentId = chosen || (names.data ? ([...names.data.keys()][0] ?? "") : "");
  const res = useLoad(async () => {
    if (!agentId) return undefined;
    const w = windowOf(win);
    return unwrap(
      api.GET("/v1/agent-events/summary", {
        params: { query: { agent_id: agentId, since: w.since, until: w.until } },
      }),
    );
  }, `${win}|${agentId}`);
  const s = res.data?.summary;
  return (
    <Page title="Agent events">
      <FilterBar>
        <FilterSelect
          label="Agent"
          value={agentId}
          choices={agentChoices(names.data)}
          onChange={(a) => navigate("/agent-events", { window: win, agent_id: a })}
        />
        <WindowSelect
          value={win}
          onChange={(w) => navigate("/agent-events", { window: w, agent_id: agentId })}
        />
      </FilterBar>
      <ErrorBox message={names.error ?? res.error} />
      {names.data && names.data.size === 0 ? <p class="empty">No agents yet.</p> : null}
      {s ? (
        <Fields
          rows={[
            ["Sessions", s.sessions],
            ["Tool calls", s.tool_calls],
            ["Tools succeeded", s.tools_succeeded],
            ["Tools failed or cancelled", s.tools_failed],
            ["Tool time", fmtMs(s.tool_duration_ms)],
            ["Input tokens", s.input_tokens],
            ["Output tokens", s.output_tokens],
            [
              "Cost (USD)",
              `${s.cost_usd}${s.cost_known ? "" : " (incomplete: some usage events carried no cost)"}`,
            ],
            ["Last event", fmtTime(s.last_event_at)],
          ]}
        />
      ) : null}
    </Page>
  );
}
