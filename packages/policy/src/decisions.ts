import { newId } from "@gw/core";
import { coalesce, type NewPolicyDecision, policyRepo, type Query } from "@gw/db";
import type { Decision } from "./compile.ts";
import type { PolicyInput } from "./input.ts";

export type DecisionRecorder = {
  /** Records one evaluated call (denials too) and returns its `pdec_` id once committed. */
  record: (input: PolicyInput, decision: Decision) => Promise<string>;
};

/**
 * Decision records on the hot path: group-committed (one statement for many calls under load,
 * written at once when idle). Only metadata is stored: agent, protocol, tool, outcome, reason.
 */
export function createDecisionRecorder(query: Query): DecisionRecorder {
  const write = coalesce<{ tenantId: string; d: NewPolicyDecision }>(
    (items) => policyRepo.insertDecisions(query, items),
    { maxInFlight: 4, maxBatch: 256 },
  );
  return {
    record: async (input, decision) => {
      const id = newId("pdec");
      await write({
        tenantId: input.tenantId,
        d: {
          id,
          agentId: input.agentId,
          protocol: input.protocol,
          mcpTool: input.mcpTool,
          action: decision.action,
          matchedRule: decision.matchedRule,
          reason: decision.reason,
        },
      });
      return id;
    },
  };
}
