import { unwrap } from "../api.ts";
import { href } from "../router.ts";
import { ErrorBox, fmtMs, fmtTime, Status, useLoad, useSession } from "../ui.tsx";

/** Every invocation of one A2A task in order (docs/a2a.md), the one shown marked. */
export function TaskInvocations({ taskId, current }: { taskId: string; current: string }) {
  const { api } = useSession();
  const list = useLoad(
    () => unwrap(api.GET("/v1/invocations", { params: { query: { a2a_task_id: taskId, limit: 100 } } })),
    taskId,
  );
  const rows = list.data?.data ?? [];
  return (
    <>
      <h3>Invocations of this task</h3>
      <ErrorBox message={list.error} />
      <table data-testid="task-invocations">
        <thead>
          <tr>
            <th scope="col">Invocation</th>
            <th scope="col">Method</th>
            <th scope="col">Status</th>
            <th scope="col">Task state</th>
            <th scope="col">Latency</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-id={r.id} aria-current={r.id === current ? "true" : undefined}>
              <td>
                {r.id === current ? (
                  <code>{r.id}</code>
                ) : (
                  <a href={href(`/invocations/${r.id}`)}>
                    <code>{r.id}</code>
                  </a>
                )}
              </td>
              <td>{r.a2a_method ?? "—"}</td>
              <td>
                <Status value={r.status} />
              </td>
              <td>{r.a2a_task_state ?? "—"}</td>
              <td class="num">{fmtMs(r.latency_ms)}</td>
              <td>{fmtTime(r.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
