import type { InvocationWriter } from "@gw/db";
import type { Runtime } from "@gw/runtime";
import type { createAgentCache } from "./agent-cache.ts";
import type { Tracker } from "./tracker.ts";

export type ProxyDeps = Runtime & {
  agents: ReturnType<typeof createAgentCache>;
  /** Invocation writes of the hot paths, group-committed under load (see GW_RECORDS_SYNC_COMMIT). */
  invocations: InvocationWriter;
  /** The transactional path's pending insert, which must be durable before the 202. */
  durableInvocations: InvocationWriter;
  /** In-flight work (stream completions) that shutdown waits for. */
  inflight: Tracker;
};
