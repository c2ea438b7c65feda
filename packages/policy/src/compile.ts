import { POLICY_LIMITS, type PolicyAction, type PolicyDocument, type PolicyRule } from "./schema.ts";

/** What a call looks like to the policy: metadata only, never the body or the caller's token. */
export type PolicyInput = {
  tenantId: string;
  agentId: string;
  protocol: "http" | "mcp";
  mcpMethod: string | null;
  mcpTool: string | null;
  model: string | null;
  /** Bytes of the request body; null when unknown (a streamed body without Content-Length). */
  bodySize: number | null;
  /**
   * The called tool's catalog status and digest (docs/tools.md), filled by the gate for a
   * tools/call when the policy names `tool_status`; absent otherwise.
   */
  toolStatus?: string | null;
  toolDigest?: string | null;
};

/** One evaluated outcome. `matchedRule` is the 1-based rule position, "" for default/on_error. */
export type Decision = {
  readonly action: PolicyAction;
  readonly matchedRule: string;
  readonly reason: string;
};

export type ClassifierRef = { readonly url: string; readonly timeoutMs: number; readonly position: string };

export type CompiledRule = {
  readonly agents: ReadonlySet<string> | null;
  readonly toolsExact: ReadonlySet<string> | null;
  readonly toolPrefixes: readonly string[] | null;
  readonly methods: ReadonlySet<string> | null;
  readonly protocols: ReadonlySet<string> | null;
  readonly maxBody: number | null;
  readonly toolStatuses: ReadonlySet<string> | null;
  /** The rule's fixed outcome, built once: matching it allocates nothing. */
  readonly decision: Decision | null;
  readonly classifier: ClassifierRef | null;
};

export type CompiledPolicy = {
  readonly version: number;
  readonly rules: readonly CompiledRule[];
  readonly onError: PolicyAction;
  /** The outcome when no rule matches. */
  readonly fallback: Match;
  /** Some rule names `tool_status`: a tools/call needs its tool's catalog status to be judged. */
  readonly usesToolStatus: boolean;
};

/** The first matching rule's outcome: a fixed decision, or (exactly one of the two) a classifier to ask. */
export type Match = { readonly decision: Decision | null; readonly classifier: ClassifierRef | null };

const setOf = (xs: readonly string[] | undefined) => (xs ? new Set(xs) : null);

function compileRule(rule: PolicyRule, index: number): CompiledRule {
  const position = String(index + 1);
  const m = rule.match;
  let toolsExact: Set<string> | null = null;
  let toolPrefixes: string[] | null = null;
  if (m.tools) {
    toolsExact = new Set();
    toolPrefixes = [];
    for (const t of m.tools) {
      if (t.endsWith("*")) toolPrefixes.push(t.slice(0, -1));
      else toolsExact.add(t);
    }
  }
  return Object.freeze({
    agents: setOf(m.agents),
    toolsExact,
    toolPrefixes,
    methods: setOf(m.methods),
    protocols: setOf(m.protocols),
    maxBody: m.max_body_bytes ?? null,
    toolStatuses: setOf(m.tool_status),
    decision: rule.action
      ? Object.freeze({ action: rule.action, matchedRule: position, reason: `rule ${position}` })
      : null,
    classifier: rule.classifier
      ? Object.freeze({
          url: rule.classifier.url,
          timeoutMs: rule.classifier.timeout_ms ?? POLICY_LIMITS.classifierDefaultTimeoutMs,
          position,
        })
      : null,
  });
}

/** Turns a validated document into the structure evaluation walks; done once per version. */
export function compilePolicy(doc: PolicyDocument, version: number): CompiledPolicy {
  return Object.freeze({
    version,
    usesToolStatus: doc.rules.some((r) => r.match.tool_status !== undefined),
    rules: Object.freeze(doc.rules.map(compileRule)),
    onError: doc.on_error,
    fallback: Object.freeze({
      decision: Object.freeze({ action: doc.default, matchedRule: "", reason: "default" }),
      classifier: null,
    }),
  });
}

export function toolHolds(r: CompiledRule, tool: string | null): boolean {
  if (tool === null) return false;
  if (r.toolsExact?.has(tool)) return true;
  const prefixes = r.toolPrefixes as readonly string[];
  for (let i = 0; i < prefixes.length; i++) if (tool.startsWith(prefixes[i] as string)) return true;
  return false;
}

function holds(r: CompiledRule, input: PolicyInput): boolean {
  if (r.agents !== null && !r.agents.has(input.agentId)) return false;
  if (r.protocols !== null && !r.protocols.has(input.protocol)) return false;
  if (r.methods !== null && (input.mcpMethod === null || !r.methods.has(input.mcpMethod))) return false;
  if (r.toolsExact !== null && !toolHolds(r, input.mcpTool)) return false;
  if (r.toolStatuses !== null && (input.toolStatus == null || !r.toolStatuses.has(input.toolStatus))) {
    return false;
  }
  // An unknown size (a streamed body) may be any size: the condition holds, so a size cap is
  // never bypassed by leaving Content-Length out.
  if (r.maxBody !== null && input.bodySize !== null && input.bodySize <= r.maxBody) return false;
  return true;
}

/**
 * First match wins. Returns the matched rule's fixed decision (a shared frozen object), the
 * classifier to ask, or the default. Synchronous and allocation-free.
 */
export function matchPolicy(policy: CompiledPolicy, input: PolicyInput): Match {
  const rules = policy.rules;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i] as CompiledRule;
    if (holds(r, input)) return r;
  }
  return policy.fallback;
}
