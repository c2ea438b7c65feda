// An MCP agent's tool catalog (docs/tools.md): what the server lists, each tool's status against
// the definition an operator pinned, the diff of a drifted tool, pin, unpin and refresh. An agent
// whose tools were never learned says why its tools/calls are refused under a tool_status rule.
import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { Table } from "../list/index.ts";
import type { Agent, ToolDetail } from "../types.ts";
import { Done, ErrorBox, fmtTime, Status, useAction, useLoad, useSession } from "../ui.tsx";

/**
 * What a call of this exposed name costs, as the gateway charges it (docs/payments.md, MCP tool
 * calls): the first tool price whose name or `prefix*` matches, network and payee defaulting to
 * the agent's price; "free" when none does.
 */
export function toolPriceText(agent: Pick<Agent, "tool_prices" | "price"> | undefined, name: string): string {
  const found = agent?.tool_prices?.find((p) =>
    p.tool.endsWith("*") ? name.startsWith(p.tool.slice(0, -1)) : p.tool === name,
  );
  if (!found) return "free";
  return `${found.amount} USDC on ${found.network ?? agent?.price?.network ?? "base"}`;
}

export function AgentTools({
  agentId,
  virtual = false,
  agent,
}: {
  agentId: string;
  virtual?: boolean;
  agent?: Pick<Agent, "tool_prices" | "price">;
}) {
  const { api } = useSession();
  const path = { params: { path: { id: agentId } } };
  const tools = useLoad(() => unwrap(api.GET("/v1/agents/{id}/tools", path)), agentId);
  const [shown, setShown] = useState<string>();
  const { error, busy, run } = useAction();
  const [refreshed, setRefreshed] = useState<string>();

  const act = (fn: () => Promise<unknown>) => {
    setRefreshed(undefined);
    return run(async () => {
      await fn();
      tools.reload();
    });
  };
  const pin = (names?: string[]) =>
    act(() =>
      unwrap(api.POST("/v1/agents/{id}/tools/pin", { ...path, body: names ? { tools: names } : {} })),
    );
  const unpin = (names: string[]) =>
    act(() => unwrap(api.DELETE("/v1/agents/{id}/tools/pin", { ...path, body: { tools: names } })));
  // The gateway lists the server's tools itself; the answer says what it learned.
  const refresh = () =>
    act(async () => {
      const r = await unwrap(api.POST("/v1/agents/{id}/tools/refresh", path));
      const n = r.data.filter((t) => t.status !== "removed").length;
      setRefreshed(
        `Refreshed: the server lists ${n} tool${n === 1 ? "" : "s"}${
          r.complete ? "." : " (not a complete list: its pages stopped early, so nothing was marked absent)."
        }`,
      );
    });

  const list = tools.data?.data ?? [];
  // Never learned: no tools/list passed through the gateway and no refresh found any.
  const neverLearned = tools.data !== undefined && list.length === 0 && tools.data.refreshed_at === null;
  const refreshButton = (
    <button type="button" class={neverLearned ? "" : "secondary"} disabled={busy} onClick={refresh}>
      Refresh tools
    </button>
  );
  return (
    <section aria-labelledby="tools" data-testid="agent-tools">
      <div class="section-head">
        <h2 id="tools">Tools</h2>
        <div class="actions">
          {virtual || neverLearned ? null : refreshButton}
          <button type="button" disabled={busy || list.length === 0} onClick={() => pin()}>
            Pin all
          </button>
        </div>
      </div>
      <ErrorBox message={tools.error ?? error} />
      <Done message={refreshed} />
      {tools.data ? (
        <p class="muted">
          Last complete list: {tools.data.refreshed_at ? fmtTime(tools.data.refreshed_at) : "never"}.
        </p>
      ) : null}
      {neverLearned ? (
        <div class="notice" data-testid="tools-never-learned">
          <p>
            <strong>The gateway has never seen this agent's tools.</strong> Until it has, every tool is{" "}
            <code>unknown</code>, and a policy rule on <code>tool_status: ["unknown"]</code> (the usual
            pinning rule) denies every <code>tools/call</code> to this agent.{" "}
            {virtual
              ? "List the tools through the gateway (any MCP client does when it connects)."
              : "List the tools through the gateway (any MCP client does when it connects), or have the gateway list them now."}
          </p>
          {virtual ? null : <div class="actions">{refreshButton}</div>}
        </div>
      ) : tools.data && list.length === 0 ? (
        <p class="empty">
          No tools in the server's last list
          {virtual ? "." : ": list them through the gateway, or refresh tools."}
        </p>
      ) : null}
      {list.length > 0 ? <TrySearch agentId={agentId} /> : null}
      {list.length > 0 ? (
        <Table
          rows={list}
          rowKey={(t) => t.name}
          rowProps={(t) => ({ "data-tool": t.name })}
          columns={[
            { head: "Tool", cellClass: "mono", cell: (t) => t.name },
            { head: "Status", cell: (t) => <Status value={t.status} /> },
            { head: "Price", cellClass: "mono", cell: (t) => toolPriceText(agent, t.name) },
            { head: "Description", class: "wide", cell: (t) => t.description ?? "—" },
            { head: "Changed", cell: (t) => fmtTime(t.changed_at) },
            {
              head: "Actions",
              cell: (t) => (
                <div class="actions">
                  {t.status === "drifted" ? (
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => setShown(shown === t.name ? undefined : t.name)}
                    >
                      {shown === t.name ? "Hide diff" : "Diff"}
                    </button>
                  ) : null}
                  {t.status !== "pinned" ? (
                    <button type="button" disabled={busy} onClick={() => pin([t.name])}>
                      {t.status === "drifted" ? "Approve and pin" : "Pin"}
                    </button>
                  ) : null}
                  {t.pinned_digest ? (
                    <button type="button" class="secondary" disabled={busy} onClick={() => unpin([t.name])}>
                      Unpin
                    </button>
                  ) : null}
                </div>
              ),
            },
          ]}
        />
      ) : null}
      {shown ? <ToolDiff agentId={agentId} name={shown} /> : null}
    </section>
  );
}

/**
 * What search_tools ranks for a query (docs/tools.md, Try a search): the same index over this
 * catalog, best first, with each tool's status (an agent's own search also leaves out what its
 * policy denies it).
 */
function TrySearch({ agentId }: { agentId: string }) {
  const { api } = useSession();
  const [found, setFound] = useState<TrySearchRow[]>();
  const { error, busy, run } = useAction();
  return (
    <div data-testid="tool-search">
      <h3>Try a search</h3>
      <form
        class="inline"
        aria-label="Try a search"
        onSubmit={async (e) => {
          e.preventDefault();
          const query = (e.currentTarget.elements.namedItem("query") as HTMLInputElement).value;
          const searched = await run(async () => {
            const r = await unwrap(
              api.POST("/v1/agents/{id}/tools/search", {
                params: { path: { id: agentId } },
                body: { query, limit: 10 },
              }),
            );
            setFound(r.data);
          });
          if (!searched) setFound(undefined);
        }}
      >
        <input name="query" maxLength={512} placeholder="e.g. open a pull request" autoComplete="off" />
        <button type="submit" disabled={busy}>
          Search
        </button>
      </form>
      <ErrorBox message={error} />
      {found && found.length === 0 ? <p class="empty">No tool matches.</p> : null}
      {found && found.length > 0 ? (
        <ol class="search-results">
          {found.map((t) => (
            <li key={t.name} data-found={t.name}>
              <span class="mono">{t.name}</span> <Status value={t.status} />{" "}
              <span class="muted">{t.description ?? ""}</span>
            </li>
          ))}
        </ol>
      ) : null}
    </div>
  );
}

type TrySearchRow = { name: string; status: string; description: string | null };

/** The pinned definition beside the current one; lines only one side has are marked. */
function ToolDiff({ agentId, name }: { agentId: string; name: string }) {
  const { api } = useSession();
  const detail = useLoad(
    () => unwrap(api.GET("/v1/agents/{id}/tools/{name}", { params: { path: { id: agentId, name } } })),
    `${agentId}|${name}`,
  );
  const d = detail.data;
  return (
    <div data-testid="tool-diff">
      <h3>
        Changes to <code>{name}</code> since it was pinned
      </h3>
      <ErrorBox message={detail.error} />
      {d ? <Diff before={d.pinned} after={d.definition} /> : null}
    </div>
  );
}

function Diff({ before, after }: { before: ToolDetail["pinned"]; after: ToolDetail["definition"] }) {
  const left = JSON.stringify(before, null, 2).split("\n");
  const right = JSON.stringify(after, null, 2).split("\n");
  return (
    <div class="diff">
      <DiffSide title="Pinned" testid="diff-pinned" lines={left} other={right} mark="removed" />
      <DiffSide title="Listed now" testid="diff-current" lines={right} other={left} mark="added" />
    </div>
  );
}

/** One side of the diff, its lines the `other` side lacks marked with the class `mark`. */
function DiffSide(props: { title: string; testid: string; lines: string[]; other: string[]; mark: string }) {
  const inOther = new Set(props.other);
  return (
    <div>
      <h4>{props.title}</h4>
      <pre data-testid={props.testid}>
        {props.lines.map((l, i) => (
          <span key={i} class={inOther.has(l) ? "" : props.mark}>
            {`${l}\n`}
          </span>
        ))}
      </pre>
    </div>
  );
}
