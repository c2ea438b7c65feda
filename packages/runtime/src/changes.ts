import type { Store } from "@gw/db";
import type { Logger } from "@gw/telemetry";

/** A write to something the data plane caches. `id` narrows it (an agent); absent = the tenant's. */
export type Change = {
  /** `tools`: an MCP agent's tool catalog (pins, learned changes); `id` is the agent. */
  /** `session`: an older MCP client ended its virtual server session; `id` is the session id. */
  kind: "agent" | "credential" | "policy" | "settlement" | "tools" | "session";
  tenantId: string;
  id?: string;
};

export type ChangeBus = {
  /** Tells this process at once and every other process through Postgres NOTIFY. */
  publish: (change: Change) => Promise<void>;
  /** Hears every change, this process's own included (possibly twice: invalidate idempotently). */
  subscribe: (fn: (change: Change) => void) => () => void;
  close: () => Promise<void>;
};

const CHANNEL = "gw_changes";
const KINDS: ReadonlySet<string> = new Set([
  "agent",
  "credential",
  "policy",
  "settlement",
  "tools",
  "session",
]);

/**
 * docs/architecture.md, Writes take effect on the next call: a write is effective on the next call of the process that took it, and on
 * every other replica within 1 s. Postgres LISTEN/NOTIFY carries it between processes (no extra
 * infrastructure: every replica already shares the database); the caches' time-to-live stays as
 * the bound when a notification is lost (a listener reconnecting).
 */
export async function createChangeBus(
  store: Pick<Store, "listen" | "notify">,
  logger: Logger,
): Promise<ChangeBus> {
  const listeners = new Set<(change: Change) => void>();
  const emit = (change: Change) => {
    for (const fn of listeners) {
      try {
        fn(change);
      } catch (e) {
        logger.warn({ err: e instanceof Error ? e.name : "error" }, "change listener failed");
      }
    }
  };
  let unlisten: (() => Promise<void>) | undefined;
  try {
    unlisten = await store.listen(CHANNEL, (payload) => {
      const change = parseChange(payload);
      if (change) emit(change);
    });
  } catch (e) {
    // Without LISTEN other replicas' writes show after the cache TTL instead: degrade, do not fail.
    logger.warn({ err: e instanceof Error ? e.name : "error" }, "change notifications unavailable");
  }
  return {
    async publish(change) {
      emit(change);
      await store.notify(CHANNEL, JSON.stringify(change)).catch((e: unknown) => {
        logger.warn({ err: e instanceof Error ? e.name : "error" }, "change notification not sent");
      });
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    close: async () => {
      listeners.clear();
      await unlisten?.();
    },
  };
}

function parseChange(payload: string): Change | undefined {
  try {
    const v = JSON.parse(payload) as Partial<Change>;
    if (typeof v.kind !== "string" || !KINDS.has(v.kind) || typeof v.tenantId !== "string") return undefined;
    return {
      kind: v.kind as Change["kind"],
      tenantId: v.tenantId,
      ...(typeof v.id === "string" ? { id: v.id } : {}),
    };
  } catch {
    return undefined;
  }
}
