import { coalesce, type Query } from "@gw/db";
import { CLOSE_ENTRIES_CTES } from "./invocation-update.ts";

// Conditional state transitions of an invocation: each changes a row only from the state it
// expects, so a redelivered job, a sweeper and a late commit can never undo each other.

// The claim returns the call's stored request with it: the worker learns the call (ids only
// travel in the queue) in the statement that claims it. It writes only columns no index reads, so
// it is a HOT update: `status` stays `pending`, `started_at` says the call runs (run-state.ts).
export const CLAIM_SQL = `with claimed as (
  update invocations i set started_at = now(), attempts = 1
  from unnest($1::text[], $2::text[]) as v(tenant_id, id)
  where i.tenant_id = v.tenant_id and i.id = v.id and i.status = 'pending' and i.started_at is null
  returning i.tenant_id, i.id)
select c.tenant_id, c.id, r.job, r.body from claimed c
left join invocation_requests r on r.invocation_id = c.id and r.tenant_id = c.tenant_id`;

/** A claim: false when the row was not pending; else the call's stored request (absent if none). */
export type Claimed = false | { job?: Record<string, unknown>; body?: Buffer };

type Claim = { tenantId: string; id: string; claimed: Claimed };

/**
 * pending → running for the worker, group-committed: the claims of calls that start while others
 * are being claimed go out as one UPDATE (one statement, one commit for the lot), each answered
 * with its stored request, or false when its row was not pending (a duplicate or a redelivery).
 */
export function createClaimer(query: Query, opts: { maxInFlight?: number; maxBatch?: number } = {}) {
  const claim = coalesce<Claim>(
    async (items) => {
      const rows = await query(CLAIM_SQL, [items.map((c) => c.tenantId), items.map((c) => c.id)]);
      // A row is claimed once: of two claims of one row in a batch (a duplicate delivery), only
      // the first wins; a claim naming another tenant's row never does.
      const key = (tenantId: unknown, id: unknown) => `${tenantId}\u0000${id}`;
      const claimed = new Map(rows.map((r) => [key(r.tenant_id, r.id), r]));
      for (const c of items) {
        const k = key(c.tenantId, c.id);
        const row = claimed.get(k);
        claimed.delete(k);
        c.claimed = row ? requestOf(row) : false;
      }
    },
    { maxInFlight: opts.maxInFlight ?? 2, maxBatch: opts.maxBatch ?? 256 },
  );
  return async (tenantId: string, id: string): Promise<Claimed> => {
    const c: Claim = { tenantId, id, claimed: false };
    await claim(c);
    return c.claimed;
  };
}

function requestOf(row: Record<string, unknown>): Exclude<Claimed, false> {
  if (row.job === null || row.job === undefined) return {};
  const body = row.body as Buffer | Uint8Array;
  return { job: row.job as Record<string, unknown>, body: Buffer.isBuffer(body) ? body : Buffer.from(body) };
}

// With its open entries, in the same statement (migration 0029).
export const FAIL_OPEN_SQL = `with ended as (
  update invocations set status = 'failed', error_class = $3, completed_at = now()
  where tenant_id = $1 and id = $2 and status in ('pending', 'running') returning id, mode, completed_at, agent_id
), ${CLOSE_ENTRIES_CTES}
select agent_id from ended`;

/**
 * Ends an invocation that is still open as failed, `internal` unless said otherwise (`cancelled`:
 * its caller went away before its answer); false when it was already terminal.
 */
export async function failIfOpen(
  query: Query,
  tenantId: string,
  id: string,
  errorClass: "internal" | "cancelled" = "internal",
): Promise<boolean> {
  return (await query(FAIL_OPEN_SQL, [tenantId, id, errorClass])).length > 0;
}

// Running: claimed (`pending` with `started_at`), or `running` as a claim before ADR 0030 wrote it.
export const REPEAT_SQL = `update invocations set attempts = attempts + 1, started_at = now()
where tenant_id = $1 and id = $2 and status in ('pending', 'running') and started_at is not null
returning attempts`;

/** Marks a running invocation as being tried again (a redelivered job); false when not running. */
export async function markRepeat(query: Query, tenantId: string, id: string): Promise<boolean> {
  return (await query(REPEAT_SQL, [tenantId, id])).length > 0;
}
