import type { Query } from "../client.ts";

// Conditional state transitions of an invocation: each changes a row only from the state it
// expects, so a redelivered job, a sweeper and a late commit can never undo each other.

const CLAIM_SQL = `update invocations set status = 'running', started_at = now(), attempts = 1
where tenant_id = $1 and id = $2 and status = 'pending' returning id`;

/** pending → running for the worker; false when the row was not pending (a redelivered job). */
export async function claimInvocation(query: Query, tenantId: string, id: string): Promise<boolean> {
  return (await query(CLAIM_SQL, [tenantId, id])).length > 0;
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
