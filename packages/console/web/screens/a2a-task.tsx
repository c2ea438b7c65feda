import { unwrap } from "../api.ts";
import { Table } from "../list/index.ts";
import { href } from "../router.ts";
import { ErrorBox, fmtMs, fmtTime, Status, useLoad, useSession } from "../ui.tsx";

/** Every invocation of one A2A task in order (docs/a2a.md), the one shown marked. */
export function TaskInvocations({ taskId, current }: { taskId: string; current: string }) {
  const { api } = useSession();
  const list = useLoad(
    () => unwrap(api.GET("/v1/invocations", { params: { query: { a2a_task_id: taskId, limit: 100 } } })),
    taskId,
  );
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
          { head: "Method", cell: (r) => r.a2a_method ?? "—" },
          { head: "Status", cell: (r) => <Status value={r.status} /> },
          { head: "Task state", cell: (r) => r.a2a_task_state ?? "—" },
          { head: "Latency", cellClass: "num", cell: (r) => fmtMs(r.latency_ms) },
          { head: "Created", cell: (r) => fmtTime(r.created_at) },
        ]}
      />
    </>
  );
}
