import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import type { Agent } from "../types.ts";
import { useLoad, useSession } from "../ui.tsx";

export type Member = NonNullable<Agent["members"]>[number];

/** "a*, b" → ["a*", "b"]; empty → absent. */
function patterns(text: string): string[] | undefined {
  const list = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length > 0 ? list : undefined;
}

type Row = { agent_id: string; prefix: string; include: string; exclude: string };

function rowOf(m: Member): Row {
  return {
    agent_id: m.agent_id,
    prefix: m.prefix,
    include: (m.include ?? []).join(", "),
    exclude: (m.exclude ?? []).join(", "),
  };
}

function memberOf(r: Row): Member {
  const include = patterns(r.include);
  const exclude = patterns(r.exclude);
  return {
    agent_id: r.agent_id,
    prefix: r.prefix,
    ...(include ? { include } : {}),
    ...(exclude ? { exclude } : {}),
  };
}

/**
 * A virtual MCP server's members (docs/mcp.md, Virtual MCP servers), picked among the tenant's
 * MCP agents that are not virtual themselves: each picked agent with its prefix and optional
 * include/exclude tool patterns, in the order they were picked. Validation is the server's.
 */
export function MembersField(props: { selfId?: string; initial: Member[]; onChange: (m: Member[]) => void }) {
  const { api } = useSession();
  const candidates = useLoad(
    () =>
      unwrap(api.GET("/v1/agents", { params: { query: { protocol: "mcp", limit: 100 } } })).then((l) =>
        l.data.filter((a) => a.members === null && a.id !== props.selfId),
      ),
    "mcp-agents",
  );
  // In picking order (the member order); pattern lists edited as text.
  const [rows, setRows] = useState<Row[]>(props.initial.map(rowOf));
  const update = (next: Row[]) => {
    setRows(next);
    props.onChange(next.map(memberOf));
  };
  const set = (agentId: string, change: Partial<Row> | null) => {
    if (change === null) return update(rows.filter((r) => r.agent_id !== agentId));
    const at = rows.findIndex((r) => r.agent_id === agentId);
    if (at < 0)
      return update([...rows, { agent_id: agentId, prefix: "", include: "", exclude: "", ...change }]);
    update(rows.map((r, i) => (i === at ? { ...r, ...change } : r)));
  };
  return (
    <fieldset aria-label="Members">
      <legend>Members (tools exposed as prefix__name; an empty prefix exposes the member's own names)</legend>
      {(candidates.data ?? []).length === 0 ? <p class="muted">No MCP agent to pick yet.</p> : null}
      {(candidates.data ?? []).map((a) => {
        const m = rows.find((x) => x.agent_id === a.id);
        return (
          <div class="row" key={a.id}>
            <label class="check">
              <input
                type="checkbox"
                aria-label={`Member ${a.name}`}
                checked={Boolean(m)}
                onChange={(e) => set(a.id, e.currentTarget.checked ? {} : null)}
              />
              {a.name}
            </label>
            {m ? (
              <>
                <label>
                  Prefix
                  <input
                    aria-label={`Prefix of ${a.name}`}
                    value={m.prefix}
                    onInput={(e) => set(a.id, { prefix: e.currentTarget.value.trim() })}
                  />
                </label>
                <label>
                  Include
                  <input
                    aria-label={`Include of ${a.name}`}
                    placeholder="issue_*, search"
                    value={m.include}
                    onInput={(e) => set(a.id, { include: e.currentTarget.value })}
                  />
                </label>
                <label>
                  Exclude
                  <input
                    aria-label={`Exclude of ${a.name}`}
                    value={m.exclude}
                    onInput={(e) => set(a.id, { exclude: e.currentTarget.value })}
                  />
                </label>
              </>
            ) : null}
          </div>
        );
      })}
    </fieldset>
  );
}
