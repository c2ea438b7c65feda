import { type CompiledPolicy, type CompiledRule, toolHolds } from "./compile.ts";

/** What a per-caller tool list depends on besides the tool (the caller's call facts). */
export type ListFacts = { readonly agentId: string };

const MAX_MEMO = 10_000;
const memos = new WeakMap<CompiledPolicy, Map<string, boolean>>();

/**
 * Whether a `tools/list` answer shows this tool to this caller (docs/tools.md, Per-caller tool
 * lists): the rules are walked for a tools/call of the tool by the caller with its arguments
 * unknown. A rule that holds decides (deny → omitted, anything else → listed); a rule that does
 * not hold is skipped; a rule that needs the arguments (`max_body_bytes`) or a classifier cannot
 * be decided here → listed; no rule → the default. Memoised per (policy version, caller facts,
 * tool, status): a list of N tools costs N map lookups once the tools were seen.
 */
export function toolListed(policy: CompiledPolicy, facts: ListFacts, tool: string, status: string): boolean {
  let memo = memos.get(policy);
  if (!memo) {
    memo = new Map();
    memos.set(policy, memo);
  }
  const key = `${facts.agentId}\n${status}\n${tool}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const listed = walk(policy, facts, tool, status);
  if (memo.size >= MAX_MEMO) memo.clear();
  memo.set(key, listed);
  return listed;
}

function walk(policy: CompiledPolicy, facts: ListFacts, tool: string, status: string): boolean {
  for (const r of policy.rules) {
    const holds = holdsForCall(r, facts, tool, status);
    if (holds === "no") continue;
    if (holds === "undecidable" || r.classifier) return true;
    return r.decision?.action !== "deny";
  }
  return policy.fallback.decision?.action !== "deny";
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
  return "yes";
}
