import type { AnswerHooks, ToolSearch } from "@gw/forward";
import type { FacilitatorRef } from "@gw/payments";
import type { PolicyGate } from "@gw/policy";
import type { InFlight, Limit } from "@gw/ratelimit";
import type { Runtime } from "@gw/runtime";
import type { AgentCache } from "./agent-cache.ts";
import type { Tracker } from "./tracker.ts";

export type ProxyDeps = Runtime & {
  agents: AgentCache;
  /** The deployment's per-agent bucket for agents without their own rate_limit. */
  defaultRateLimit: Limit;
  /** Step 9's answer-side features: the tool catalog learning from and filtering tool lists. */
  answerHooks: AnswerHooks;
  /** Step 9's tool search of search-mode virtual servers (their tools/list and search_tools). */
  toolSearch: ToolSearch;
  /** Step 6: the tenant's policy, evaluated and recorded once per call. */
  policy: PolicyGate;
  /** Calls in flight per agent and tenant in this replica (the concurrency step). */
  concurrency: InFlight;
  /** In-flight work (stream records) that graceful shutdown waits for. */
  inflight: Tracker;
  /**
   * The digest pinned for a tool of an agent (the catalog's cached view, its read bounded by the
   * store's deadline), null when not pinned: read for a paid MCP tool call, whose receipt binds it.
   */
  pinnedDigest: (tenantId: string, agentId: string, tool: string) => Promise<string | null>;
  /** The tenant's facilitator (null: it settles nothing), cached and invalidated on settlement writes. */
  facilitators: (tenantId: string) => Promise<FacilitatorRef | null>;
};
