import { unwrap } from "../api.ts";
import { Table } from "../list/index.ts";
import { href } from "../router.ts";
import type { InvocationDetail } from "../types.ts";
import { ErrorBox, Fields, fmtMs, fmtTime, Status, useLoad, useSession } from "../ui.tsx";

/**
 * An A2A call's place in its task (docs/a2a.md): the method, the task, its context and the last
 * state the answer carried, then every invocation of that task in order, this one marked.
 */
export function A2aTask({ d }: { d: InvocationDetail }) {
  return (
    <section data-testid="a2a-task">
      <h2>A2A task</h2>
      <Fields
        rows={[
          ["Method", d.a2a_method ? <code key="m">{d.a2a_method}</code> : null],
          ["Task", d.a2a_task_id ? <code key="t">{d.a2a_task_id}</code> : null],
          ["Context", d.a2a_context_id ? <code key="c">{d.a2a_context_id}</code> : null],
          ["Task state", d.a2a_task_state],
        ]}
      />
      {d.a2a_task_id ? <TaskInvocations taskId={d.a2a_task_id} current={d.id} /> : null}
    </section>
  );
}

function TaskInvocations({ taskId, current }: { taskId: string; current: string }) {
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
