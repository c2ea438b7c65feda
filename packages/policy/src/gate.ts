import { DomainError, withinDeadline } from "@gw/core";
import { type Db, policyRepo, type Query } from "@gw/db";
import { recordPolicyDecision } from "@gw/telemetry";
import type { Dispatcher } from "undici";
import { createPolicyCache, type PolicyCache } from "./cache.ts";
import type { CompiledPolicy, Decision, PolicyInput } from "./compile.ts";
import { createDecisionRecorder } from "./decisions.ts";
import { evaluatePolicy } from "./evaluate.ts";

export type RecordedDecision = Decision & { readonly id: string };

export type PolicyGate = {
  /**
   * Evaluates the call once and records the decision (denials too). Null when the tenant has no
   * policy document: nothing is evaluated or recorded then. Never throws for a deny: the caller
   * answers it (see `deniedByPolicy`).
   */
  decide: (input: PolicyInput) => Promise<RecordedDecision | null>;
  /** The tenant's compiled policy (cached), or null when it has none. */
  policyOf: (tenantId: string) => Promise<CompiledPolicy | null>;
  close: () => void;
};

/** The one answer to a denied call: 403, nothing created, nothing forwarded. */
export const deniedByPolicy = () => new DomainError("forbidden", "denied by policy");

/**
 * Step 6 of the pipeline as one object: the tenant's compiled policy from a short cache (policy
 * writes invalidate it through `subscribe`), evaluation, the classifier through the SSRF-guarded
 * dispatcher, and the decision record. `onDecision` runs after the record commits (receipts).
 */
export function createPolicyGate(opts: {
  db: Db;
  /** The records pool: decisions are group-committed with the other hot-path records. */
  query: Query;
  dispatcher: Dispatcher;
  cacheMs: number;
  /** Hears policy writes (see createPolicyCache). */
  subscribe?: (invalidate: (tenantId: string) => void) => () => void;
  onDecision?: (id: string, input: PolicyInput, decision: Decision) => void;
  /**
   * The catalog status and digest of a called tool (docs/tools.md), asked only for a tools/call
   * when the tenant's policy names `tool_status`.
   */
  toolStatus?: (
    tenantId: string,
    agentId: string,
    tool: string,
  ) => Promise<{ status: string; digest: string | null }>;
}): PolicyGate {
  const cache = createPolicyCache({
    // Bounded: with the store down the caller gets 503 in time, not a hang (docs/reliability.md, Bounded waits).
    load: (tenantId) => withinDeadline(policyRepo.get(opts.db, tenantId)),
    ttlMs: opts.cacheMs,
    ...(opts.subscribe ? { subscribe: opts.subscribe } : {}),
  });
  const recorder = createDecisionRecorder(opts.query);
  return {
    decide: async (input) => {
      const policy = await cache.get(input.tenantId);
      if (!policy) return null;
      if (policy.usesToolStatus && input.mcpTool !== null && opts.toolStatus) {
        // A cached view answers at once; the store read behind a miss carries its own deadline.
        const tool = await opts.toolStatus(input.tenantId, input.agentId, input.mcpTool);
        input = { ...input, toolStatus: tool.status, toolDigest: tool.digest };
      }
      const decision = await evaluatePolicy(policy, input, { dispatcher: opts.dispatcher });
      recordPolicyDecision({ action: decision.action });
      const id = await recorder.record(input, decision);
      opts.onDecision?.(id, input, decision);
      return { ...decision, id };
    },
    policyOf: cache.get,
    close: cache.close,
  };
}

/**
 * The tenants' compiled policies read from the store, cached like the gate's (the worker reads
 * them to filter tool lists it collects; docs/tools.md).
 */
export function storedPolicies(opts: {
  db: Db;
  cacheMs: number;
  subscribe?: (invalidate: (tenantId: string) => void) => () => void;
}): PolicyCache {
  return createPolicyCache({
    load: (tenantId) => withinDeadline(policyRepo.get(opts.db, tenantId)),
    ttlMs: opts.cacheMs,
    ...(opts.subscribe ? { subscribe: opts.subscribe } : {}),
  });
}
