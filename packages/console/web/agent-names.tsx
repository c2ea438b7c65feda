// The tenant's agents by name, for the tables and filters that show an agent id.
import { unwrap } from "./api.ts";
import { type Choices, FilterPicker } from "./list/index.ts";
import { useLoad, useSession } from "./ui.tsx";

export type Names = Map<string, string> | undefined;

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

/** The agents as select choices: id → name. */
export function agentChoices(names: Names): Choices {
  return [...(names ?? new Map<string, string>())];
}

/** An agent's name, or its id when the name is not known (a deleted agent, the list not loaded). */
export function AgentName({ id, names }: { id: string; names: Names }) {
  return <>{names?.get(id) ?? <code class="small">{id}</code>}</>;
}

/**
 * The Agent filter of a list (`agent_id`), any or one of the tenant's agents; with `keepUnknown`
 * an id the URL names that is not among them stays a choice.
 */
export function AgentPicker(props: { value: string | undefined; names: Names; keepUnknown?: boolean }) {
  const { value, names } = props;
  const unknown = props.keepUnknown && value && !names?.has(value) ? [value] : [];
  return (
    <FilterPicker
      label="Agent"
      name="agent_id"
      value={value}
      remount={names?.size}
      any
      choices={[...agentChoices(names), ...unknown]}
    />
  );
}
