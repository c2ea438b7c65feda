// Drifted tools at a glance (docs/tools.md): every MCP agent's tools whose server now lists
// another definition than the pinned one, or dropped a pinned one. Read from the public API: the
// MCP agents (one page of 100), then each one's catalog.
import { unwrap } from "../api.ts";
import { Table } from "../list/index.ts";
import { href } from "../router.ts";
import { ErrorBox, Status, useLoad, useSession } from "../ui.tsx";

type Flagged = { agentId: string; agent: string; tool: string; status: string };

export function DriftedTools() {
  const { api } = useSession();
  const flagged = useLoad(async (): Promise<Flagged[]> => {
    const agents = await unwrap(
      api.GET("/v1/agents", { params: { query: { protocol: "mcp", limit: 100 } } }),
    );
    const lists = await Promise.all(
      agents.data.map(async (a) => {
        const tools = await unwrap(api.GET("/v1/agents/{id}/tools", { params: { path: { id: a.id } } }));
        return tools.data
          .filter((t) => t.status === "drifted" || t.status === "removed")
          .map((t) => ({ agentId: a.id, agent: a.name, tool: t.name, status: t.status }));
      }),
    );
    return lists.flat();
  }, "drifted");
  const list = flagged.data;
  return (
    <>
      <h3>Drifted tools</h3>
      <ErrorBox message={flagged.error} />
      {list ? (
        <p data-testid="drifted-count">
          {list.length === 0
            ? "No pinned tool has drifted or gone."
            : `${list.length} pinned ${list.length === 1 ? "tool differs" : "tools differ"} from what the server lists now.`}
        </p>
      ) : null}
      {list && list.length > 0 ? (
        <Table
          testid="drifted-tools"
          rows={list}
          rowKey={(f) => `${f.agentId}/${f.tool}`}
          columns={[
            { head: "Agent", cell: (f) => <a href={href(`/agents/${f.agentId}`)}>{f.agent}</a> },
            { head: "Tool", cellClass: "mono", cell: (f) => f.tool },
            { head: "Status", cell: (f) => <Status value={f.status} /> },
          ]}
        />
      ) : null}
    </>
  );
}
