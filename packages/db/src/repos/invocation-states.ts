import type { Query } from "../client.ts";
import { coalesce } from "./coalesce.ts";

// Conditional state transitions of an invocation: each changes a row only from the state it
// expects, so a redelivered job, a sweeper and a late commit can never undo each other.

const CLAIM_SQL = `update invocations i set status = 'running', started_at = now(), attempts = 1
from unnest($1::text[], $2::text[]) as v(tenant_id, id)
where i.tenant_id = v.tenant_id and i.id = v.id and i.status = 'pending' returning i.tenant_id, i.id`;

type Claim = { tenantId: string; id: string; claimed: boolean };

/**
 * pending → running for the worker, group-committed: the claims of jobs that start while others
 * are being claimed go out as one UPDATE (one statement, one commit for the lot), each answered
 * whether its own row was pending (false: a redelivered job).
 */
export function createClaimer(query: Query, opts: { maxInFlight?: number; maxBatch?: number } = {}) {
  const claim = coalesce<Claim>(
    async (items) => {
      const rows = await query(CLAIM_SQL, [items.map((c) => c.tenantId), items.map((c) => c.id)]);
      // A row is claimed once: of two claims of one row in a batch (a redelivered job), only the
      // first wins; a claim naming another tenant's row never does.
      const key = (tenantId: unknown, id: unknown) => `${tenantId}\u0000${id}`;
      const claimed = new Set(rows.map((r) => key(r.tenant_id, r.id)));
      for (const c of items) c.claimed = claimed.delete(key(c.tenantId, c.id));
    },
    { maxInFlight: opts.maxInFlight ?? 2, maxBatch: opts.maxBatch ?? 256 },
  );
  return async (tenantId: string, id: string): Promise<boolean> => {
    const c: Claim = { tenantId, id, claimed: false };
    await claim(c);
    return c.claimed;
  };
}

const FAIL_OPEN_SQL = `update invocations set status = 'failed', error_class = 'internal', completed_at = now()
where tenant_id = $1 and id = $2 and status in ('pending', 'running') returning agent_id`;

/** Ends an invocation that is still open as failed/internal; false when it was already terminal. */
export async function failIfOpen(query: Query, tenantId: string, id: string): Promise<boolean> {
  return (await query(FAIL_OPEN_SQL, [tenantId, id])).length > 0;
}

const REPEAT_SQL = `update invocations set attempts = attempts + 1, started_at = now()
where tenant_id = $1 and id = $2 and status = 'running' returning attempts`;

/** Marks a running invocation as being tried again (a redelivered job); false when not running. */
export async function markRepeat(query: Query, tenantId: string, id: string): Promise<boolean> {
  return (await query(REPEAT_SQL, [tenantId, id])).length > 0;
}
