import type { Failure } from "./outcome.ts";
import type { DecisionRecord } from "./repos/decision-rows.ts";
import type { InvocationUpdate, NewInvocation } from "./repos/invocations.ts";
import {
  completion,
  type Extras,
  type Facts,
  failing,
  type InvocationHandle,
  type InvocationRef,
  unsettled,
} from "./terminal.ts";

/** What a deferred record writes through: the lifecycle's own writers (lifecycle.ts), made once per lifecycle. */
export type DeferredPorts = {
  /** The `running` row of a call that outlived its defer point (retried while the store is down). */
  open: (t: string, row: NewInvocation, set?: InvocationUpdate, decision?: DecisionRecord) => Promise<void>;
  /** The record in one INSERT of its final state (batched, retried). */
  insert: (t: string, row: NewInvocation, set?: InvocationUpdate, decision?: DecisionRecord) => Promise<void>;
  /** A terminal state: an UPDATE of the open row unless `committed` wrote it; then the terminal hook. */
  write: (
    ref: InvocationRef,
    set: InvocationUpdate,
    extras: Extras | undefined,
    committed?: Promise<void>,
  ) => Promise<void>;
  /** The decision's own hook once it committed with the record (fail-open). */
  noted: (decision: DecisionRecord | undefined) => () => void;
};

/**
 * A streaming record written off the critical path (`openDeferred`, ADR 0006): nothing is written
 * unless the call outlives `deferMs`, when its `running` row is inserted; a call that ends before
 * is recorded by one INSERT of its final state. A class, so a call pays for one object and its
 * timer, not for six closures of its own (docs/performance.md, "Streaming: allocation per call").
 */
export class Deferred implements InvocationHandle {
  /** The `running` row's insert, once the call outlived its defer point (true: it committed). */
  private inserted: Promise<boolean> | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly ports: DeferredPorts,
    private readonly row: NewInvocation & { id: string },
    private readonly ref: InvocationRef,
    deferMs: number,
    private readonly decision: DecisionRecord | undefined,
  ) {
    this.timer = setTimeout(openRunning, deferMs, this);
  }

  /** The call outlived its defer point: its `running` row goes in. */
  openRunning(): void {
    const { decision, ports } = this;
    this.inserted = ports.open(this.ref.tenantId, this.row, undefined, decision).then(
      () => {
        ports.noted(decision)();
        return true;
      },
      () => false,
    );
  }

  complete(status: number, facts: Facts, extras?: Extras): Promise<void> {
    return this.end(completion(status, facts), extras);
  }

  fail(failure: Failure, facts: Facts = {}, extras?: Extras): Promise<void> {
    return this.end(failing(failure, facts), extras);
  }

  failUnsettled(facts: Facts, extras?: Extras): Promise<void> {
    return this.end(unsettled(facts), extras);
  }

  private end(set: InvocationUpdate, extras: Extras | undefined): Promise<void> {
    const open = this.inserted;
    const { write } = this.ports;
    if (open === null) {
      clearTimeout(this.timer);
      return write(this.ref, set, extras, this.whole(set));
    }
    // The running row went in: update it. Its insert failed: write the record whole.
    return open.then((ok) =>
      ok ? write(this.ref, set, extras) : write(this.ref, set, extras, this.whole(set)),
    );
  }

  /** The record in one INSERT of its final state, with the call's decision. */
  private whole(set: InvocationUpdate): Promise<void> {
    const { decision, ports } = this;
    const inserted = ports.insert(this.ref.tenantId, this.row, set, decision);
    return decision?.recorded ? inserted.then(ports.noted(decision)) : inserted;
  }
}

// One function for every deferred record's timer (setTimeout passes the record).
const openRunning = (d: Deferred) => d.openRunning();
