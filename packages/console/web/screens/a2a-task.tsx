import { unwrap } from "../api.ts";
import { Table } from "../list/index.ts";
import { href } from "../router.ts";
import { ErrorBox, fmtMs, fmtTime, Status, useLoad, useSession } from "../ui.tsx";

/**
 * Every invocation of one task in order, the one shown marked: an A2A task (docs/a2a.md) or an MCP
 * task (docs/mcp.md, Tasks), listed by its own filter.
 */
export function TaskInvocations({
  taskId,
  current,
  kind = "a2a",
}: {
  taskId: string;
  current: string;
  kind?: "a2a" | "mcp";
}) {
  const { api } = useSession();
  const query = kind === "mcp" ? { mcp_task_id: taskId, limit: 100 } : { a2a_task_id: taskId, limit: 100 };
  const list = useLoad(() => unwrap(api.GET("/v1/invocations", { params: { query } })), `${kind}:${taskId}`);
  return (
    <>
      <h3>Invocations of this task</h3>
      <ErrorBox message={list.error} />
      <Table
        testid="task-invocations"
        rows={list.data?.data ?? []}
        rowKey={(r) => r.id}
        rowProps={(r) => ({ "data-id": r.id, "aria-current": r.id === current ? "true" : undefined })}
        columns={[
          {
            head: "Invocation",
            cell: (r) =>
              r.id === current ? (
                <code>{r.id}</code>
              ) : (
                <a href={href(`/invocations/${r.id}`)}>
                  <code>{r.id}</code>
                </a>
              ),
          },
          { head: "Method", cell: (r) => (kind === "mcp" ? r.mcp_method : r.a2a_method) ?? "—" },
          { head: "Status", cell: (r) => <Status value={r.status} /> },
          {
            head: "Task state",
            cell: (r) => (kind === "mcp" ? r.mcp_task_status : r.a2a_task_state) ?? "—",
          },
          { head: "Latency", cellClass: "num", cell: (r) => fmtMs(r.latency_ms) },
          { head: "Created", cell: (r) => fmtTime(r.created_at) },
        ]}
      />
    </>
  );
}
