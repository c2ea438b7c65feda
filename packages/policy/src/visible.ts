import { callVariables } from "./cel/variables.ts";
import { type CompiledPolicy, type CompiledRule, toolHolds } from "./compile.ts";
import type { PolicyInput } from "./input.ts";
import type { PolicyRuleAction } from "./schema.ts";

/** Who lists the tools, as the policy's conditions see a caller (absent: not known here). */
export type ListCaller = Pick<PolicyInput, "principal" | "agentName" | "mode">;

/** What a per-caller tool list depends on besides the tool: the agent and, when known, the caller. */
export type ListFacts = {
  readonly tenantId: string;
  readonly agentId: string;
  readonly caller?: ListCaller | undefined;
  /** `listCallerKey` of the caller, when the list computed it once for all its tools. */
  readonly callerKey?: string | undefined;
};

const MAX_MEMO = 10_000;
const memos = new WeakMap<CompiledPolicy, Map<string, boolean>>();
const hasConditions = new WeakMap<CompiledPolicy, boolean>();

/**
 * Whether a `tools/list` answer shows this tool to this caller (docs/tools.md, Per-caller tool
 * lists): the rules are walked for a tools/call of the tool by the caller with its arguments
 * unknown. A rule that holds decides (deny → omitted, any other action → listed: `omits`); a rule that does
 * not hold is skipped; a rule that cannot be decided here → listed: one that needs the arguments
 * (`max_body_bytes`, a `when` reading `call.arguments`), a `when` that reads the clock or the
 * price (`call.price`, the agent's to tell) or fails,
 * a `when` when the caller is not known (a collected answer in the worker), a classifier; no rule
 * → the default. Memoised per (policy version, caller, agent, tool, status): a list of N tools
 * costs N map lookups once the tools were seen.
 */
export function toolListed(policy: CompiledPolicy, facts: ListFacts, tool: string, status: string): boolean {
  let memo = memos.get(policy);
  if (!memo) {
    memo = new Map();
    memos.set(policy, memo);
  }
  const key = `${facts.callerKey ?? listCallerKey(policy, facts)}\n${facts.agentId}\n${status}\n${tool}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const listed = walk(policy, facts, tool, status);
  if (memo.size >= MAX_MEMO) memo.clear();
  memo.set(key, listed);
  return listed;
}

/**
 * What of the caller a list's filtering depends on: empty unless some rule has a condition that
 * could read it (then who the caller is, their scopes and claims, the agent's name and the mode).
 */
export function listCallerKey(policy: CompiledPolicy, facts: ListFacts): string {
  let conditions = hasConditions.get(policy);
  if (conditions === undefined) {
    conditions = policy.rules.some((r) => r.when !== null);
    hasConditions.set(policy, conditions);
  }
  const c = facts.caller;
  if (!conditions || !c) return "";
  return JSON.stringify([c.principal.sub, c.principal.scopes, c.principal.claims, c.agentName, c.mode]);
}

function walk(policy: CompiledPolicy, facts: ListFacts, tool: string, status: string): boolean {
  for (const r of policy.rules) {
    const holds = holdsForCall(r, facts, tool, status);
    if (holds === "no") continue;
    if (holds === "undecidable" || r.action === null) return true;
    return !omits(r.action);
  }
  const fallback = policy.fallback.decision;
  return fallback === null || !omits(fallback.action);
}

/**
 * Only `deny` takes a tool out of a list: every other action (`allow`, `warn`, `require_approval`,
 * and any action added later) leaves it listed, since the caller may still call it. Asked of the
 * action as written, not of the call's decision (a `require_approval` rule decides a deny until
 * an approval is used).
 */
function omits(action: PolicyRuleAction): boolean {
  return action === "deny";
}

/** A rule against a tools/call of `tool` whose body (its arguments) is unknown. */
function holdsForCall(r: CompiledRule, facts: ListFacts, tool: string, status: string) {
  if (r.agents !== null && !r.agents.has(facts.agentId)) return "no";
  if (r.protocols !== null && !r.protocols.has("mcp")) return "no";
  if (r.methods !== null && !r.methods.has("tools/call")) return "no";
  if (r.toolsExact !== null && !toolHolds(r, tool)) return "no";
  if (r.toolStatuses !== null && !r.toolStatuses.has(status)) return "no";
  // The body's size depends on the arguments: this rule could go either way.
  if (r.maxBody !== null) return "undecidable";
  if (r.when === null) return "yes";
  return conditionHolds(r, facts, tool, status);
}

/** A `when` for this caller's tools/call of `tool`, when it can be told without the call itself. */
function conditionHolds(r: CompiledRule, facts: ListFacts, tool: string, status: string) {
  const when = r.when;
  if (when === null || !facts.caller || when.readsArguments || when.readsClock || when.readsPrice)
    return "undecidable";
  const input: PolicyInput = {
    tenantId: facts.tenantId,
    agentId: facts.agentId,
    protocol: "mcp",
    rpcMethod: "tools/call",
    mcpTool: tool,
    model: null,
    bodySize: null,
    ...facts.caller,
    arguments: undefined,
    toolStatus: status,
    toolDigest: null,
  };
  try {
    return when.holds(callVariables(input).forCondition(false)) ? "yes" : "no";
  } catch {
    return "undecidable";
  }
}
