import { newId } from "@gw/core";
import { coalesce, type PolicyAction, type Query } from "@gw/db";
import type { Decision } from "./compile.ts";
import type { PolicyInput } from "./input.ts";
import { type NewPolicyDecision, policyRepo } from "./repos/policies.ts";

/**
 * An allowed or warned call's decision, not yet written: it is written with the call's invocation
 * (docs/policy.md "Decisions"), or alone (`DecisionRecorder.writeAlone`) when the call is refused
 * before it has one. `recorded` runs once it committed (receipts).
 */
export type UnrecordedDecision = {
  readonly tenantId: string;
  readonly id: string;
  readonly agentId: string;
  readonly protocol: string;
  readonly mcpTool: string | null;
  readonly action: PolicyAction;
  readonly matchedRule: string;
  readonly reason: string;
  readonly at: Date;
  readonly recorded: () => void;
};

export type DecisionRecorder = {
  /** Records one evaluated call (denials too) and returns its `pdec_` id once committed. */
  record: (input: PolicyInput, decision: Decision) => Promise<string>;
  /** Writes a decision that has no invocation to travel with; resolves once committed. */
  writeAlone: (d: UnrecordedDecision) => Promise<void>;
};

/**
 * Decision records written on their own (denials, and decisions of calls refused after step 6):
 * group-committed (one statement for many calls under load, written at once when idle). Only
 * metadata is stored: agent, protocol, tool, outcome, reason.
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
    writeAlone: async (d) => {
      await write({
        tenantId: d.tenantId,
        d: {
          id: d.id,
          agentId: d.agentId,
          protocol: d.protocol,
          mcpTool: d.mcpTool,
          action: d.action,
          matchedRule: d.matchedRule,
          reason: d.reason,
        },
      });
      d.recorded();
    },
  };
}
