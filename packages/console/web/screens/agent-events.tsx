import { unwrap } from "../api.ts";
import { navigate, useRoute } from "../router.ts";
import { ErrorBox, Fields, fmtMs, fmtTime, NotEnabled, Page, useLoad, useSession } from "../ui.tsx";
import { WindowSelect, windowOf } from "./analytics.tsx";
import { useAgentNames } from "./invocations.tsx";

/** One agent's summary of its agent events (sessions, tool calls, tokens, cost) over a window. */
export function AgentEventsScreen() {
  const { caps } = useSession();
  if (!caps.surfaces.agent_events) return <NotEnabled what="Agent events" />;
  return <Summary />;
}

function Summary() {
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
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Agent
          <select
            value={agentId}
            onChange={(e) => navigate("/agent-events", { window: win, agent_id: e.currentTarget.value })}
          >
            {[...(names.data ?? new Map<string, string>())].map(([id, name]) => (
              <option key={id} value={id}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <WindowSelect
          value={win}
          onChange={(w) => navigate("/agent-events", { window: w, agent_id: agentId })}
        />
      </form>
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
