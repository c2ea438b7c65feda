import type { Db } from "../client.ts";
import {
  type InvocationResult,
  type InvocationUpdate,
  invocationRepo,
  type NewInvocation,
} from "./invocations.ts";

type Pending<T> = { item: T; resolve: () => void; reject: (e: unknown) => void };

/**
 * Group commit for hot-path writes: with fewer than `maxInFlight` flushes running, an item is
 * written at once (no added latency when idle); otherwise it waits and goes out with everything
 * else that queued meanwhile, as one statement or one transaction, so one commit (one fsync) covers
 * many calls under load. A batch that fails is retried item by item, so one bad row fails alone.
 */
export function coalesce<T>(
  flush: (items: T[]) => Promise<void>,
  opts: { maxInFlight: number; maxBatch: number },
): (item: T) => Promise<void> {
  const queue: Pending<T>[] = [];
  let inFlight = 0;
  const run = async (batch: Pending<T>[]) => {
    try {
      await flush(batch.map((p) => p.item));
      for (const p of batch) p.resolve();
    } catch (e) {
      if (batch.length === 1) {
        batch[0]?.reject(e);
        return;
      }
      await Promise.all(
        batch.map((p) =>
          flush([p.item]).then(
            () => p.resolve(),
            (err: unknown) => p.reject(err),
          ),
        ),
      );
    }
  };
  const kick = () => {
    while (inFlight < opts.maxInFlight && queue.length > 0) {
      const batch = queue.splice(0, opts.maxBatch);
      inFlight++;
      void run(batch).finally(() => {
        inFlight--;
        kick();
      });
    }
  };
  return (item) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      kick();
    });
}

type Update = { tenantId: string; id: string; set: InvocationUpdate; result?: InvocationResult | undefined };

export type InvocationWriter = {
  insert: (tenantId: string, row: NewInvocation) => Promise<void>;
  update: (
    tenantId: string,
    id: string,
    set: InvocationUpdate,
    result?: InvocationResult | undefined,
  ) => Promise<void>;
};

/**
 * Invocation inserts and updates of the data plane, group-committed (see `coalesce`): a batch of
 * inserts is one multi-row INSERT; a batch of updates is one transaction whose statements are
 * pipelined on its connection. Same rows, same tenant scoping as `invocationRepo`.
 */
export function createInvocationWriter(db: Db, opts: { maxInFlight?: number; maxBatch?: number } = {}) {
  const o = { maxInFlight: opts.maxInFlight ?? 4, maxBatch: opts.maxBatch ?? 256 };
  const insert = coalesce<{ tenantId: string; row: NewInvocation }>(async (items) => {
    if (items.length === 1) {
      const [one] = items as [{ tenantId: string; row: NewInvocation }];
      await invocationRepo.insert(db, one.tenantId, one.row);
      return;
    }
    await invocationRepo.insertMany(db, items);
  }, o);
  const update = coalesce<Update>(async (items) => {
    if (items.length === 1) {
      const [u] = items as [Update];
      await invocationRepo.update(db, u.tenantId, u.id, u.set, u.result);
      return;
    }
    await db.transaction(async (tx) => {
      await Promise.all(
        items.map((u) => invocationRepo.updateIn(tx as unknown as Db, u.tenantId, u.id, u.set, u.result)),
      );
    });
  }, o);
  return {
    insert: (tenantId, row) => insert({ tenantId, row }),
    update: (tenantId, id, set, result) => update({ tenantId, id, set, result }),
  } satisfies InvocationWriter;
}
