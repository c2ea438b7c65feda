import type { Runtime } from "@gw/runtime";
import type { createAgentCache } from "./agent-cache.ts";
import type { Tracker } from "./tracker.ts";

export type ProxyDeps = Runtime & {
  agents: ReturnType<typeof createAgentCache>;
  /** In-flight work (stream completions) that shutdown waits for. */
  inflight: Tracker;
};
