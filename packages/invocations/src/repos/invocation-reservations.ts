import { coalesce, type Query, type Reservation } from "@gw/db";
import type { DecisionRecord } from "./decision-rows.ts";
import { INSERT_PARAMS, insertParams, insertSql } from "./invocation-writer.ts";
import type { NewInvocation } from "./invocations.ts";

/** A reservation that another call already holds (see `insertWithReservations`). */
export class ReservationTaken extends Error {
  constructor(readonly kind: Reservation["kind"]) {
    super(`reservation already taken: ${kind}`);
    this.name = "ReservationTaken";
  }
}

const R = INSERT_PARAMS;
const RESERVE_CTE = `r as (
  insert into reservations (kind, scope, key, invocation_id)
  select * from unnest($${R + 1}::text[], $${R + 2}::text[], $${R + 3}::text[], $${R + 4}::text[])
  returning 1
)`;
/** The stored request (invocation_requests) as a CTE over unnested arrays starting at `$at`. */
export const requestCte = (at: number) => `q as (
  insert into invocation_requests (invocation_id, tenant_id, queue, job, body)
  select v.invocation_id, v.tenant_id, v.queue, v.job::jsonb, decode(v.body, 'hex')
  from unnest($${at}::text[], $${at + 1}::text[], $${at + 2}::text[], $${at + 3}::text[], $${at + 4}::text[]) as v(invocation_id, tenant_id, queue, job, body)
  returning 1
)`;
// The reservations (and the stored request) are inserted by data-modifying CTEs of the invocation
// insert: one statement, so a taken key (unique violation) leaves nothing behind.
const RESERVE_SQL = insertSql({ storesRequest: false }, RESERVE_CTE);
const RESERVE_WITH_REQUEST_SQL = insertSql({ storesRequest: true }, RESERVE_CTE, requestCte(R + 5));

/** A transactional call's stored request: its queue, the job's fields and the bytes to forward. */
export type StoredRequest = { queue: string; job: Record<string, unknown>; body: Buffer };

/** The five request arrays of `requestCte` for a batch of (tenant, id, request). */
export function requestParams(
  items: ReadonlyArray<{ tenantId: string; id: string; request: StoredRequest }>,
): string[][] {
  return [
    items.map((x) => x.id),
    items.map((x) => x.tenantId),
    items.map((x) => x.request.queue),
    items.map((x) => JSON.stringify(x.request.job)),
    items.map((x) => x.request.body.toString("hex")),
  ];
}

/**
 * Inserts one invocation together with its reservations (and its stored request, when given),
 * atomically and durably. Of concurrent calls holding the same key exactly one succeeds; the
 * others get `ReservationTaken` naming the kind of the key that was taken, and nothing of theirs
 * is written.
 */
export async function insertWithReservations(
  query: Query,
  tenantId: string,
  row: NewInvocation,
  reservations: readonly Reservation[],
  request?: StoredRequest | undefined,
  decision?: DecisionRecord | undefined,
): Promise<void> {
  const params = [
    ...insertParams([{ tenantId, row, decision }]),
    reservations.map((r) => r.kind),
    reservations.map((r) => r.scope),
    reservations.map((r) => r.key),
    reservations.map(() => row.id),
    ...(request ? requestParams([{ tenantId, id: row.id as string, request }]) : []),
  ];
  await query(request ? RESERVE_WITH_REQUEST_SQL : RESERVE_SQL, params).catch((e: unknown) =>
    takenOr(query, reservations, e),
  );
}

const RESERVE_ALONE_SQL = `insert into reservations (kind, scope, key, invocation_id)
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[])`;

/**
 * Takes the keys for an invocation whose row is written later (a streaming call's record, ADR
 * 0006), atomically and durably: of concurrent calls holding the same key exactly one succeeds,
 * the others get `ReservationTaken` and nothing of theirs is written. See ADR 0047.
 */
export async function reserve(query: Query, invocationId: string, reservations: readonly Reservation[]) {
  await query(RESERVE_ALONE_SQL, [
    reservations.map((r) => r.kind),
    reservations.map((r) => r.scope),
    reservations.map((r) => r.key),
    reservations.map(() => invocationId),
  ]).catch((e: unknown) => takenOr(query, reservations, e));
}

/**
 * The keys of many calls in one statement: a key another row holds (committed, in flight in
 * another transaction, or earlier in this batch) is skipped, not an error, and the rows that went
 * in name their invocation, so each call learns whether its key is its own.
 */
const RESERVE_BATCH_SQL = `insert into reservations (kind, scope, key, invocation_id)
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[])
  on conflict do nothing
  returning invocation_id`;

type Claim = { invocationId: string; key: Reservation; won: boolean };
const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
const byKey = (a: Claim, b: Claim) =>
  order(a.key.kind, b.key.kind) || order(a.key.scope, b.key.scope) || order(a.key.key, b.key.key);

/**
 * `reserve`, group-committed (ADR 0051): a call's key goes out at once when no batch is in
 * flight, else with every key that arrived meanwhile, as one durable statement, so one commit
 * (one WAL flush, one round trip of the proxy) covers the concurrent paid calls. Exactly one of
 * the calls holding a key wins it, in one batch or across batches and processes (`on conflict`
 * waits for a conflicting transaction in flight, then skips a key it committed). A call with more
 * than one key takes them alone (`reserve`): all or none of them, which one skipped key of a
 * shared statement could not give.
 */
export function createReserver(query: Query) {
  const take = coalesce<Claim>(
    async (batch) => {
      // Inserted in key order (unnest's order): two processes' batches holding the same keys then
      // wait on each other in one order, never in a cycle (a deadlock Postgres breaks only after
      // deadlock_timeout, failing a batch whose calls are then retried one by one).
      const claims = batch.length > 1 ? [...batch].sort(byKey) : batch;
      const rows = await query(RESERVE_BATCH_SQL, [
        claims.map((c) => c.key.kind),
        claims.map((c) => c.key.scope),
        claims.map((c) => c.key.key),
        claims.map((c) => c.invocationId),
      ]);
      const won = new Set(rows.map((r) => r.invocation_id));
      for (const c of claims) c.won = won.has(c.invocationId);
    },
    { maxInFlight: 1, maxBatch: 256 },
  );
  return async (invocationId: string, reservations: readonly Reservation[]): Promise<void> => {
    const [key, ...more] = reservations;
    if (!key || more.length > 0) return reserve(query, invocationId, reservations);
    const claim: Claim = { invocationId, key, won: false };
    await take(claim);
    if (!claim.won) throw new ReservationTaken(key.kind);
  };
}

/** Gives back the keys of a call that was refused before it was forwarded (its caller got an error). */
export async function release(query: Query, invocationId: string, reservations: readonly Reservation[]) {
  await query(
    "delete from reservations r using unnest($1::text[], $2::text[], $3::text[]) as v(kind, scope, key) where (r.kind, r.scope, r.key) = (v.kind, v.scope, v.key) and r.invocation_id = $4",
    [
      reservations.map((r) => r.kind),
      reservations.map((r) => r.scope),
      reservations.map((r) => r.key),
      invocationId,
    ],
  );
}

/** A unique violation on a key becomes `ReservationTaken` naming the key's kind; anything else is rethrown. */
async function takenOr(query: Query, reservations: readonly Reservation[], e: unknown): Promise<never> {
  if ((e as { code?: string }).code !== "23505") throw e;
  const taken = await query(
    "select kind from reservations r join unnest($1::text[], $2::text[], $3::text[]) as v(kind, scope, key) using (kind, scope, key) limit 1",
    [reservations.map((r) => r.kind), reservations.map((r) => r.scope), reservations.map((r) => r.key)],
  );
  const kind = taken[0]?.kind as Reservation["kind"] | undefined;
  if (!kind) throw e;
  throw new ReservationTaken(kind);
}
