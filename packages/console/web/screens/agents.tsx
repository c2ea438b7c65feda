import { AGENT_PROTOCOLS } from "@gw/client";
import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { FilterBar, FilterSelect, PagedTable, usePage } from "../list/index.ts";
import { href, navigate, useRoute } from "../router.ts";
import type { Agent, CreateAgentBody, PatchAgentBody } from "../types.ts";
import {
  ConfirmDelete,
  Done,
  ErrorBox,
  Fields,
  fmtTime,
  Page,
  Status,
  useAction,
  useLoad,
  useSession,
} from "../ui.tsx";
import { AgentForm } from "./agent-form.tsx";
import { AgentTools } from "./agent-tools.tsx";

export function AgentsScreen() {
  const route = useRoute();
  const id = route.segments[1];
  if (id === "new") return <CreateAgent />;
  if (id) return <AgentDetail id={id} />;
  return <AgentList />;
}

function AgentList() {
  const { api } = useSession();
  const route = useRoute();
  const protocol = route.query.get("protocol") ?? "";
  const deleted = route.query.get("deleted");
  const list = usePage(
    (page) =>
      unwrap(
        // The filter comes from the URL as typed: the API judges it, and its message is shown.
        api.GET("/v1/agents", {
          params: { query: { protocol: protocol as (typeof AGENT_PROTOCOLS)[number], ...page } },
        }),
      ),
    protocol,
  );
  return (
    <Page
      title="Agents"
      actions={
        <a class="button" href={href("/agents/new")}>
          New agent
        </a>
      }
    >
      <FilterBar>
        <FilterSelect
          label="Protocol"
          value={protocol}
          any="any"
          choices={AGENT_PROTOCOLS}
          onChange={(p) => navigate("/agents", { protocol: p || undefined })}
        />
      </FilterBar>
      <Done message={deleted ? `Deleted “${deleted}”. Its invocation history stays readable.` : undefined} />
      <PagedTable
        list={list}
        rowKey={(a) => a.id}
        columns={[
          { head: "Name", cell: (a) => <a href={href(`/agents/${a.id}`)}>{a.name}</a> },
          { head: "Protocol", cell: (a) => a.protocol },
          { head: "State", cell: (a) => <AgentState agent={a} /> },
          { head: "Upstream", class: "wide", cellClass: "wide mono", cell: (a) => a.upstream_url ?? "—" },
          {
            head: "Price",
            cellClass: "mono",
            cell: (a) => (a.price ? `${a.price.amount} ${a.price.asset}` : "free"),
          },
          {
            head: "Rate limit",
            cell: (a) => (a.rate_limit ? `${a.rate_limit.rps}/s, burst ${a.rate_limit.burst}` : "default"),
          },
        ]}
        empty="No agents yet."
        path="/agents"
        query={{ protocol }}
      />
    </Page>
  );
}

function AgentState({ agent }: { agent: Agent }) {
  if (agent.suspended) return <Status value="suspended" />;
  return <Status value={agent.status} />;
}

function CreateAgent() {
  const { api } = useSession();
  return (
    <Page title="New agent">
      <AgentForm
        submitLabel="Create agent"
        onSubmit={async (body) => {
          // The form's fields as entered: the API validates them and its message is shown inline.
          const agent = await unwrap(api.POST("/v1/agents", { body: body as CreateAgentBody }));
          navigate(`/agents/${agent.id}`);
        }}
      />
    </Page>
  );
}

function AgentDetail({ id }: { id: string }) {
  const { api } = useSession();
  const agent = useLoad(() => unwrap(api.GET("/v1/agents/{id}", { params: { path: { id } } })), id);
  const [editing, setEditing] = useState(false);
  const { error, busy, run } = useAction();

  /** Runs a write, then re-reads the agent unless the write returned false (it left the page). */
  const act = (fn: () => Promise<unknown>) =>
    run(async () => {
      if ((await fn()) !== false) agent.reload();
    });

  const a = agent.data;
  return (
    <Page title={a ? a.name : "Agent"}>
      <p>
        <a href={href("/agents")}>← All agents</a>
      </p>
      <ErrorBox message={agent.error ?? error} />
      {a ? (
        editing ? (
          <AgentForm
            agent={a}
            submitLabel="Save changes"
            onCancel={() => setEditing(false)}
            onSubmit={async (body) => {
              await unwrap(
                api.PATCH("/v1/agents/{id}", { params: { path: { id } }, body: body as PatchAgentBody }),
              );
              setEditing(false);
              agent.reload();
            }}
          />
        ) : (
          <>
            <div class="actions">
              <button type="button" onClick={() => setEditing(true)}>
                Edit
              </button>
              <button
                type="button"
                disabled={busy}
                onClick={() =>
                  act(() =>
                    unwrap(
                      api.PATCH("/v1/agents/{id}", {
                        params: { path: { id } },
                        body: { suspended: !a.suspended },
                      }),
                    ),
                  )
                }
              >
                {a.suspended ? "Resume" : "Suspend"}
              </button>
              <a class="button secondary" href={href("/invocations", { agent_id: a.id })}>
                Invocations
              </a>
              {a.status === "active" ? (
                <ConfirmDelete
                  label="Delete"
                  busy={busy}
                  onConfirm={() =>
                    act(async () => {
                      await unwrap(api.DELETE("/v1/agents/{id}", { params: { path: { id } } }));
                      // Deleted agents leave the catalog (their invocations stay readable).
                      navigate("/agents", { deleted: a.name });
                      return false;
                    })
                  }
                />
              ) : null}
            </div>
            <Fields
              rows={[
                ["Id", <code key="id">{a.id}</code>],
                ["State", <AgentState key="s" agent={a} />],
                ["Description", a.description],
                ["Upstream URL", a.upstream_url ? <code key="u">{a.upstream_url}</code> : null],
                ["Protocol", a.protocol],
                ["MCP transport", a.mcp_transport],
                ["MCP protocol version", a.mcp_protocol_version],
                ["Agent card URL", a.card_url ? <code key="c">{a.card_url}</code> : null],
                [
                  "Members",
                  a.members
                    ? a.members.map((m) => (
                        <div key={m.agent_id}>
                          <a href={href(`/agents/${m.agent_id}`)}>{m.agent_id}</a> as{" "}
                          <code>{m.prefix === "" ? "(no prefix)" : `${m.prefix}__`}</code>
                          {m.include ? ` include ${m.include.join(", ")}` : ""}
                          {m.exclude ? ` exclude ${m.exclude.join(", ")}` : ""}
                        </div>
                      ))
                    : null,
                ],
                [
                  "Tool discovery",
                  a.members
                    ? a.tool_discovery === "search"
                      ? "search (tools/list answers search_tools and call_tool)"
                      : "list (every member tool)"
                    : null,
                ],
                ["Credential", a.credential_ref ? <code key="c">{a.credential_ref}</code> : null],
                [
                  "Price",
                  a.price
                    ? `${a.price.amount} ${a.price.asset} on ${a.price.network} to ${a.price.pay_to}`
                    : "free",
                ],
                [
                  "Tool prices",
                  a.tool_prices
                    ? a.tool_prices
                        .map((p) => `${p.tool}: ${p.amount}${p.network ? ` on ${p.network}` : ""}`)
                        .join("; ")
                    : null,
                ],
                [
                  "Rate limit",
                  a.rate_limit
                    ? `${a.rate_limit.rps} per second, burst ${a.rate_limit.burst}`
                    : "deployment default",
                ],
                ["Capture bodies", a.capture_bodies ? "yes" : "no"],
                ["Emit receipts", a.emit_receipts ? "yes" : "no"],
                ["Created by", a.created_by],
                ["Created", fmtTime(a.created_at)],
                ["Updated", fmtTime(a.updated_at)],
              ]}
            />
            {a.protocol === "mcp" ? (
              <AgentTools agentId={a.id} virtual={a.upstream_url === null} agent={a} />
            ) : null}
          </>
        )
      ) : null}
    </Page>
  );
}
