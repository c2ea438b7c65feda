import { coalesce, type Query } from "@gw/db";
import type { DecisionRecord } from "./decision-rows.ts";
import { requestCte, requestParams, type StoredRequest } from "./invocation-reservations.ts";
import { INSERT_PARAMS, insertParams, insertSql } from "./invocation-writer.ts";
import type { NewInvocation } from "./invocations.ts";
import { statusSql } from "./run-state.ts";

type WithRequest = {
  tenantId: string;
  row: NewInvocation;
  request: StoredRequest;
  decision?: DecisionRecord | undefined;
};

const INSERT_WITH_REQUEST_SQL = insertSql({ storesRequest: true }, requestCte(INSERT_PARAMS + 1));

/**
 * Durable inserts of transactional invocations together with their stored requests: one
 * statement per batch (group commit), so the row and what rebuilds its job commit together.
 */
export function createRequestWriter(query: Query, opts: { maxInFlight?: number; maxBatch?: number } = {}) {
  const insert = coalesce<WithRequest>(
    async (items) => {
      const rows = items.map((x) => ({ tenantId: x.tenantId, row: x.row, decision: x.decision }));
      const reqs = items.map((x) => ({ tenantId: x.tenantId, id: x.row.id as string, request: x.request }));
      await query(INSERT_WITH_REQUEST_SQL, [...insertParams(rows), ...requestParams(reqs)]);
    },
    { maxInFlight: opts.maxInFlight ?? 4, maxBatch: opts.maxBatch ?? 64 },
  );
  return (tenantId: string, row: NewInvocation, request: StoredRequest, decision?: DecisionRecord) =>
    insert({ tenantId, row, request, decision });
}

/** Whether an invocation (its tenant's) still has its stored request. */
export async function hasRequest(query: Query, tenantId: string, invocationId: string): Promise<boolean> {
  const rows = await query("select 1 from invocation_requests where tenant_id = $1 and invocation_id = $2", [
    tenantId,
    invocationId,
  ]);
  return rows.length > 0;
}

/** The stored request of one invocation (its tenant's), or undefined once purged. */
export async function loadRequest(
  query: Query,
  tenantId: string,
  invocationId: string,
): Promise<StoredRequest | undefined> {
  const [row] = await query(
    "select queue, job, body from invocation_requests where tenant_id = $1 and invocation_id = $2",
    [tenantId, invocationId],
  );
  if (!row) return undefined;
  const body = row.body as Buffer | Uint8Array;
  return {
    queue: String(row.queue),
    job: row.job as Record<string, unknown>,
    body: Buffer.isBuffer(body) ? body : Buffer.from(body),
  };
}

/**
 * Takes (or renews) the lease `name` for `ms` unless another holder's lease is still running.
 * Single statement, so it works from any pooled connection; true when `holder` now holds it.
 */
export async function takeLease(query: Query, name: string, holder: string, ms: number): Promise<boolean> {
  const rows = await query(
    `insert into gw_leases (name, holder, until) values ($1, $2, now() + make_interval(secs => $3::float8 / 1000))
     on conflict (name) do update set holder = excluded.holder, until = excluded.until
     where gw_leases.until < now() or gw_leases.holder = excluded.holder
     returning holder`,
    [name, holder, ms],
  );
  return rows.length > 0;
}

/** This process is alive (see `orphanStreams`). */
export async function heartbeat(query: Query, id: string, service: string): Promise<void> {
  await query(
    `insert into gw_instances (id, service) values ($1, $2)
     on conflict (id) do update set seen_at = now()`,
    [id, service],
  );
}

/** This process is stopping: its row goes (a graceful stop has flushed its records first). */
export async function retire(query: Query, id: string): Promise<void> {
  await query("delete from gw_instances where id = $1", [id]);
}

export type OpenRow = { id: string; tenantId: string; agentId: string };

const open = (r: Record<string, unknown>): OpenRow => ({
  id: String(r.id),
  tenantId: String(r.tenant_id),
  agentId: String(r.agent_id),
});

/**
 * The open invocations joined to their rows: every candidate of the reconciler and the sweeper
 * comes from the open entries (ADR 0046), kept by triggers (migration 0028): a transactional
 * call's stored request, or its row in invocation_open (a stream's `running` row, a row without a
 * stored request), each deleted when its call completes. No index of invocations answers "open":
 * it would make every completion write index entries (no HOT update). The row's own conditions
 * stay the truth.
 */
const OPEN_ROWS = `(select invocation_id, tenant_id from invocation_requests
       union all select invocation_id, tenant_id from invocation_open) o
     join invocations i on i.id = o.invocation_id and i.tenant_id = o.tenant_id`;

/**
 * Transactional `pending` rows of `queue` created before `before`, oldest first (a row without a
 * stored request is included: it cannot be rebuilt and must be ended). The row must also have
 * been inserted at least `insertedGraceMs` ago on the database's own clock: a row that committed
 * late, after its caller was already answered 503, is young by that clock however old the call,
 * which leaves the proxy time to end it before anything could ring for it. The grace also runs
 * from the database's last start: a row whose commit landed just before a crash (its answer lost,
 * its caller answered 503) is old by its own stamp, and its proxy can only end it once the
 * database is back. Crosses tenants.
 */
export async function stalePending(
  query: Query,
  queue: string,
  before: Date,
  limit: number,
  insertedGraceMs = 0,
): Promise<OpenRow[]> {
  const rows = await query(
    `select i.id, i.tenant_id, i.agent_id from ${OPEN_ROWS}
     left join invocation_requests q on q.invocation_id = i.id
     where i.mode = 'transactional' and i.status = 'pending' and i.started_at is null
       and i.completed_at is null and i.created_at < $1
       and (q.invocation_id is null
         or (q.queue = $3
             and greatest(q.created_at, pg_postmaster_start_time()) < now() - make_interval(secs => $4::float8 / 1000)))
     order by i.created_at limit $2`,
    [before.toISOString(), limit, queue, insertedGraceMs],
  );
  return rows.map(open);
}

/**
 * Transactional `running` rows started (or last repeated) before `before`, with the protocol and
 * MCP method their stored request names (whether repeating is safe). Crosses tenants: maintenance.
 */
export async function overdueRunning(
  query: Query,
  before: Date,
  limit: number,
): Promise<Array<OpenRow & { protocol: string | null; mcpMethod: string | null }>> {
  const rows = await query(
    `select i.id, i.tenant_id, i.agent_id, q.job->>'protocol' as protocol, i.mcp_method
     from ${OPEN_ROWS} left join invocation_requests q on q.invocation_id = i.id
     where i.mode = 'transactional' and i.status in ('pending', 'running') and i.started_at is not null
       and i.completed_at is null and coalesce(i.started_at, i.created_at) < $1
     order by i.created_at limit $2`,
    [before.toISOString(), limit],
  );
  return rows.map((r) => ({
    ...open(r),
    protocol: (r.protocol as string | null) ?? null,
    mcpMethod: (r.mcp_method as string | null) ?? null,
  }));
}

/**
 * Streaming `running` rows whose owning process has not beaten since `deadBefore` (or never
 * did), created before `createdBefore`. Crosses tenants: maintenance.
 */
export async function orphanStreams(
  query: Query,
  deadBefore: Date,
  createdBefore: Date,
  limit: number,
): Promise<OpenRow[]> {
  const rows = await query(
    `select i.id, i.tenant_id, i.agent_id from ${OPEN_ROWS}
     left join gw_instances g on g.id = i.instance_id
     where i.mode = 'streaming' and i.status = 'running' and i.completed_at is null and i.created_at < $2
       and (g.id is null or g.seen_at < $1)
     order by i.created_at limit $3`,
    [deadBefore.toISOString(), createdBefore.toISOString(), limit],
  );
  return rows.map(open);
}

/** running → pending again (a safe-to-repeat call whose worker died), only if still overdue. */
export async function requeueRunning(
  query: Query,
  tenantId: string,
  id: string,
  before: Date,
): Promise<boolean> {
  const rows = await query(
    `update invocations set status = 'pending', started_at = null
     where tenant_id = $1 and id = $2 and status in ('pending', 'running') and started_at is not null
       and coalesce(started_at, created_at) < $3
     returning id`,
    [tenantId, id, before.toISOString()],
  );
  return rows.length > 0;
}

/** The status of one invocation now (the reconciler re-reads it just before it enqueues). */
export async function statusOf(query: Query, tenantId: string, id: string): Promise<string | undefined> {
  const [row] = await query(
    `select ${statusSql()} as status from invocations where tenant_id = $1 and id = $2`,
    [tenantId, id],
  );
  return row ? String(row.status) : undefined;
}

/**
 * Deletes stored requests of terminal invocations (and of rows that never committed, after an
 * hour). A completion deletes its call's own (a trigger, ADR 0046): this finds what that missed,
 * such as a terminal write of a release without the trigger. Crosses tenants: maintenance.
 */
export async function purgeRequests(query: Query, limit: number): Promise<number> {
  const rows = await query(
    `delete from invocation_requests where invocation_id in (
       select q.invocation_id from invocation_requests q left join invocations i on i.id = q.invocation_id
       where (i.id is null and q.created_at < now() - interval '1 hour') or i.status in ('succeeded', 'failed')
       limit $1)
     returning invocation_id`,
    [limit],
  );
  return rows.length;
}

/** Forgets processes not seen for a day. */
export async function forgetInstances(query: Query): Promise<void> {
  await query("delete from gw_instances where seen_at < now() - interval '1 day'", []);
}
