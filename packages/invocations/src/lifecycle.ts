import { isStoreUnavailable } from "@gw/core";
import type { Reservation, Store } from "@gw/db";
import { Deferred, type DeferredPorts } from "./deferred.ts";
import type { Failure } from "./outcome.ts";
import type { DecisionRecord } from "./repos/decision-rows.ts";
import {
  createReserver,
  insertWithReservations,
  release,
  type StoredRequest,
} from "./repos/invocation-reservations.ts";
import { createClaimer, failIfOpen, markRepeat } from "./repos/invocation-states.ts";
import { createInvocationWriter } from "./repos/invocation-writer.ts";
import type { InvocationUpdate, NewInvocation } from "./repos/invocations.ts";
import { createRequestWriter } from "./repos/reliability.ts";
import { withDeadline, withStoreRetry } from "./store-faults.ts";
import {
  completion,
  type Extras,
  type Facts,
  failing,
  type InvocationHandle,
  type InvocationRef,
  type TerminalEvent,
  unsettled,
} from "./terminal.ts";

export type {
  Extras,
  Facts,
  InvocationHandle,
  InvocationRef,
  ReceiptBinding,
  TerminalEvent,
} from "./terminal.ts";

export type Lifecycle = ReturnType<typeof createInvocationLifecycle>;

/** The pace a stored request body is granted on top of the open's deadline: a busy server's 2 MiB/s. */
const STORED_BYTES_PER_MS = (2 * 1024 * 1024) / 1000;
/**
 * The least time between two flushes of records (docs/performance.md): a record after a quiet
 * spell is written at once, under load it waits at most this long for the rows arriving with it.
 */
const RECORD_SPACING_MS = 5;
/** The undo of a late durable open retries at least this often while the store is down. */
const UNDO_RETRY_MS = 250;
/**
 * An invocation insert refused because a row with its id exists (unique_violation on the primary
 * key), or its decision's (written in the same statement, so either may be reported first). Ids are
 * fresh UUIDv7s: the rows are the call's own, written by an attempt whose answer was lost.
 */
function isOwnRowThere(e: unknown): boolean {
  if (typeof e !== "object" || e === null) return false;
  const { code, constraint_name, constraint } = e as Record<string, unknown>;
  const on = constraint_name ?? constraint;
  return code === "23505" && (on === "invocations_pkey" || on === "policy_decisions_pkey");
}
/** The error class of a call ended while open: a lost job or an error answered (internal), a caller gone (cancelled). */
type EndClass = "internal" | "cancelled";

/**
 * The one invocation lifecycle: open → (claim) → complete | fail. Every terminal write of every
 * service goes through `complete` or `fail`, and `onTerminal` hears each one after it committed
 * (fail-open: a hook that throws changes nothing). Writes are group-committed under load; `open`
 * with `durable` (the transactional 202) or with reservations waits for a durable commit.
 */
export function createInvocationLifecycle(opts: {
  store: Pick<Store, "query" | "recordsQuery">;
  onTerminal?: ((e: TerminalEvent) => void) | undefined;
  /**
   * Whether `onTerminal` has a listener now (asked after each commit): without one, no event is
   * built (the proxy's runtime has one only with receipts configured). Absent: whenever
   * `onTerminal` is given.
   */
  hears?: (() => boolean) | undefined;
  /** How long a durable open may take before the caller is answered 503 (default 1.5 s). */
  openDeadlineMs?: number | undefined;
  /** How long a record write is retried while the store is unreachable (default 10 min). */
  recordRetryMs?: number | undefined;
}) {
  const { store } = opts;
  // Records wait for nobody (no caller waits on them, they commit without the WAL flush): one
  // flush at a time, at most one every RECORD_SPACING_MS, makes the batches as large as the load,
  // so a row costs the least CPU of the gateway and of the store.
  const records = createInvocationWriter(store.recordsQuery, {
    maxInFlight: 1,
    spacingMs: RECORD_SPACING_MS,
  });
  // The `running` row of a stream that outlived its defer point, on a writer of its own: flushed as
  // soon as it is due, never after the spacing above nor behind a batch of final-state records.
  // Until it commits, a crash of this process leaves no trace of the stream, so this is the part
  // of the loss bound the writer decides (docs/reliability.md "What a crashed proxy loses").
  // They still go in batches (rows due while one flush runs share the next), without waiting to.
  const opens = createInvocationWriter(store.recordsQuery, { maxInFlight: 1 });
  const retryMs = opts.recordRetryMs ?? 600_000;
  // Records (streaming opens, every terminal write) are held and retried while the store is
  // unreachable, so an outage delays them instead of leaving rows open (docs/reliability.md).
  const insertWith =
    (writer: typeof records) =>
    (t: string, row: NewInvocation, set?: InvocationUpdate, decision?: DecisionRecord): Promise<void> =>
      withStoreRetry(
        () =>
          writer.insert(t, row, set, decision).catch((e: unknown) => {
            // The row is there already: an earlier attempt committed and its answer was lost (the
            // connection broke after the commit), so this retry must not fail the record. A bare
            // row is then written; a record with its outcome updates the row to it. The decision
            // committed with that attempt.
            if (!isOwnRowThere(e)) throw e;
            return set ? records.update(t, row.id as string, set, undefined) : undefined;
          }),
        retryMs,
      );
  const fast = {
    insert: insertWith(records),
    /** A deferred stream's `running` row (see `opens`). */
    open: insertWith(opens),
    update: (...a: Parameters<typeof records.update>) => withStoreRetry(() => records.update(...a), retryMs),
  };
  const durable = createInvocationWriter(store.query);
  // The worker's pending → running, group-committed: one UPDATE for the jobs that start together.
  const claim = createClaimer(store.recordsQuery);
  const withRequest = createRequestWriter(store.query);
  // A verified payment's nonce before the dial (ADR 0047), group-committed with the concurrent ones.
  const reserve = createReserver(store.query);
  const openDeadlineMs = opts.openDeadlineMs ?? 1_500;
  // A decision committed with its invocation: its hook (receipts) hears it, fail-open.
  const noted = (decision: DecisionRecord | undefined) => () => {
    try {
      decision?.recorded?.();
    } catch {
      // Fail-open, as the terminal hook.
    }
  };
  const terminal = (e: TerminalEvent) => {
    try {
      opts.onTerminal?.(e);
    } catch {
      // Fail-open by contract: the hook's own errors are its own to count.
    }
  };
  const hears = opts.hears ?? (() => opts.onTerminal !== undefined);
  // The event is built only for a listener, in one literal (a field after a spread of the ref
  // cost V8 a new hidden class per call, docs/performance.md "Streaming: allocation per call").
  const told = (ref: InvocationRef, set: InvocationUpdate, extras: Extras | undefined) => {
    if (!hears()) return;
    terminal({
      tenantId: ref.tenantId,
      id: ref.id,
      agentId: ref.agentId,
      status: set.status === "succeeded" ? "succeeded" : "failed",
      digests: extras?.digests,
      binding: extras?.binding,
      settlement: set.settlement
        ? { status: set.settlement.status, tx_hash: set.settlement.tx_hash }
        : undefined,
    });
  };
  // A terminal state written as an UPDATE of the open row (`committed`: written otherwise).
  const write = (
    ref: InvocationRef,
    set: InvocationUpdate,
    extras: Extras | undefined,
    committed: Promise<void> = fast.update(ref.tenantId, ref.id, set, extras?.result),
  ): Promise<void> => committed.then(() => told(ref, set, extras));
  const endIfOpen = async (ref: InvocationRef, errorClass: EndClass = "internal"): Promise<boolean> => {
    const ended = await failIfOpen(store.query, ref.tenantId, ref.id, errorClass);
    if (ended) terminal({ ...ref, status: "failed" });
    return ended;
  };
  // Ends a row its caller was told did not happen, retried every UNDO_RETRY_MS at most while the
  // store is unreachable, so it lands well inside the reconciler's grace once the store is back.
  const abandon = (ref: InvocationRef, errorClass: EndClass = "internal"): Promise<void> =>
    withStoreRetry(() => endIfOpen(ref, errorClass), 10 * 60_000, UNDO_RETRY_MS).then(
      () => {},
      () => {},
    );
  // What a deferred streaming record writes through (deferred.ts): made once per lifecycle.
  const deferredPorts: DeferredPorts = { open: fast.open, insert: fast.insert, write, noted };
  return {
    /**
     * Creates the record. With reservations, the keys and the row are one durable statement and a
     * taken key throws `ReservationTaken` with nothing written.
     */
    async open(
      tenantId: string,
      row: NewInvocation,
      o: {
        durable: boolean;
        reservations?: readonly Reservation[] | undefined;
        /** A transactional call's job, stored with the row (the reconciler rebuilds it from there). */
        request?: StoredRequest | undefined;
        /** The call's policy decision, written in the same statement as the row. */
        decision?: DecisionRecord | undefined;
      },
    ): Promise<void> {
      const held = o.reservations && o.reservations.length > 0;
      const d = o.decision;
      const inserted = held
        ? insertWithReservations(store.query, tenantId, row, o.reservations ?? [], o.request, d)
        : o.request
          ? withRequest(tenantId, row, o.request, d)
          : o.durable
            ? durable.insert(tenantId, row, undefined, d)
            : fast.insert(tenantId, row, undefined, d);
      const write = d?.recorded ? inserted.then(noted(d)) : inserted;
      if (!o.durable && !held) return write;
      // A durable open answers the caller: bounded. If it commits after the caller was answered
      // 503, the row is ended at once, so a call whose caller got an error never runs.
      const ref = { tenantId, id: row.id as string, agentId: row.agentId as string };
      const undo = () => void abandon(ref);
      // A big stored body takes its time to travel and commit even with a healthy store: the
      // deadline grows with it (a 32 MiB body gets 16 s more), so only a stalled store gets 503.
      const deadline = openDeadlineMs + (o.request?.body.length ?? 0) / STORED_BYTES_PER_MS;
      try {
        await withDeadline(write, deadline, undo);
      } catch (e) {
        // A store error may hide a commit whose answer was lost: the caller is told 503, so the
        // row, if it exists, must end.
        if (isStoreUnavailable(e)) undo();
        throw e;
      }
    },
    /**
     * Takes a call's keys durably before it is forwarded, for a call whose record is written off
     * the critical path (`openDeferred`, ADR 0047): a taken key throws `ReservationTaken`. Bounded
     * as a durable open; keys that commit after the caller was answered 503 are given back.
     */
    async reserve(ref: InvocationRef, reservations: readonly Reservation[]): Promise<void> {
      const giveBack = () =>
        void withStoreRetry(
          () => release(store.query, ref.id, reservations),
          10 * 60_000,
          UNDO_RETRY_MS,
        ).catch(() => {});
      try {
        await withDeadline(reserve(ref.id, reservations), openDeadlineMs, giveBack);
      } catch (e) {
        if (isStoreUnavailable(e)) giveBack();
        throw e;
      }
    },
    /**
     * A streaming record written off the critical path: nothing is written unless the call
     * outlives `deferMs`, when its `running` row is inserted; a call that ends before is recorded
     * by one INSERT of its final state. Either way `complete`/`fail` on the returned handle end it.
     * The call's policy decision goes in the first of those inserts (same batch, same durability).
     */
    openDeferred(
      row: NewInvocation & { id: string },
      ref: InvocationRef,
      deferMs: number,
      decision?: DecisionRecord,
    ): InvocationHandle {
      return new Deferred(deferredPorts, row, ref, deferMs, decision);
    },
    /** The handle of a record that exists (or whose insert is already under way, `after`). */
    handle(ref: InvocationRef, after: Promise<void> = Promise.resolve()): InvocationHandle {
      return {
        complete: (status, facts, extras) => after.then(() => write(ref, completion(status, facts), extras)),
        fail: (failure, facts = {}, extras) => after.then(() => write(ref, failing(failure, facts), extras)),
        failUnsettled: (facts, extras) => after.then(() => write(ref, unsettled(facts), extras)),
      };
    },
    /** pending → running, only if still pending (a call whose caller got an error never runs). */
    claim: (ref: InvocationRef) => claim(ref.tenantId, ref.id),
    /** A redelivered job of a running call is tried again: attempts + 1; false when not running. */
    repeat: (ref: InvocationRef) => markRepeat(store.query, ref.tenantId, ref.id),
    /** Terminal: answered; its status decides succeeded or failed (see `InvocationHandle`). */
    complete: (ref: InvocationRef, status: number, facts: Facts, extras?: Extras) =>
      write(ref, completion(status, facts), extras),
    /** Terminal: no usable answer; `failure` decides the error class. */
    fail: (ref: InvocationRef, failure: Failure, facts: Facts = {}, extras?: Extras) =>
      write(ref, failing(failure, facts), extras),
    /**
     * Terminal: a settlement failure ends the call with no error class (docs/payments.md): the
     * upstream was never called.
     */
    failUnsettled: (ref: InvocationRef, facts: Facts) => write(ref, unsettled(facts), undefined),
    /** Ends a call that is still open as failed/internal (its job was lost); false if terminal. */
    failIfOpen: endIfOpen,
    /**
     * Ends a call still open whose caller was answered an error (`internal`) or went away before
     * its answer (`cancelled`): it must never run. Retried while the store is unreachable;
     * resolves when done or given up.
     */
    abandon,
  };
}
