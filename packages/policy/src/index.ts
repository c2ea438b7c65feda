export * from "./answer/classifier.ts";
export * from "./answer/compile.ts";
export * from "./answer/findings.ts";
export * from "./answer/judge.ts";
export * from "./answer/schema.ts";
export * from "./answer/select.ts";
export * from "./approvals.ts";
export * from "./approvals-json.ts";
export * from "./cache.ts";
export { CEL_LIMITS } from "./cel/limits.ts";
export * from "./classifier.ts";
export * from "./compile.ts";
export * from "./decisions.ts";
export * from "./evaluate.ts";
export * from "./gate.ts";
export * from "./input.ts";
export * from "./policy.ts";
export * from "./quota.ts";
export {
  type Approval,
  type ApprovalBinding,
  type ApprovalFilter,
  approvalsRepo,
} from "./repos/approvals.ts";
export { type DecisionFilter, type NewPolicyDecision, policyRepo } from "./repos/policies.ts";
export * from "./schema.ts";
export * from "./serialize.ts";
export * from "./visible.ts";
