import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { compileCondition } from "../src/cel/compile.ts";
import { callVariables } from "../src/cel/variables.ts";
import { compilePolicy, matchPolicy, PolicyDocument, type PolicyInput } from "../src/index.ts";

const call = (over: Partial<PolicyInput> = {}): PolicyInput => ({
  tenantId: "t1",
  agentId: "agt_a",
  protocol: "mcp",
  rpcMethod: "tools/call",
  mcpTool: "transfer-2",
  model: null,
  bodySize: 100,
  principal: { sub: "alice", scopes: ["admin-1", "read"], claims: { org: "acme", groups: ["sre-3"] } },
  agentName: "prod-4-bank",
  mode: "streaming",
  arguments: { amount: 500 },
  ...over,
});

const CALLS = [
  call(),
  call({ rpcMethod: null, mcpTool: null, model: "m", mode: "transactional", bodySize: null }),
  call({ bodySize: 1_000_001, principal: { sub: "mallory-1", scopes: [], claims: {} } }),
  call({
    protocol: "a2a",
    agentName: "dev",
    principal: { sub: "", scopes: ["sre-3"], claims: { groups: "x" } },
  }),
];

/** What CEL itself says: true, false, or "error" (the rule's on_error). */
function byCel(expr: string, input: PolicyInput): boolean | "error" {
  const c = compileCondition(expr, "when");
  try {
    return c.holds(callVariables(input).forCondition(c.readsArguments));
  } catch {
    return "error";
  }
}

/** What the rule matcher decides of a rule with that condition (a match denies, on_error warns). */
function byMatcher(expr: string, input: PolicyInput): boolean | "error" {
  const doc = { default: "allow", on_error: "warn", rules: [{ action: "deny", when: expr }] };
  const action = matchPolicy(compilePolicy(v.parse(PolicyDocument, doc), 1), input).decision?.action;
  return action === "warn" ? "error" : action === "deny";
}

describe("conditions read from the call without CEL", () => {
  const direct = [
    '"admin-1" in principal.scopes && call.body_bytes > 1000000',
    'principal.sub == "mallory-1"',
    '"alice" != principal.sub',
    'principal.tenant == "t1" || agent.id == "agt_b"',
    'agent.name.startsWith("prod-4") && call.mode == "streaming"',
    'agent.name.endsWith("bank") && !agent.name.contains("dev")',
    'call.method == "" || call.tool == "transfer-2" || call.model == "m"',
    "call.body_bytes >= 100 && 100 >= call.body_bytes",
    "call.body_bytes < 0 || call.body_bytes != 100 || 1000000 < call.body_bytes",
    "has(principal.claims.groups) || has(principal.claims.org)",
    'agent.protocol == "a2a"',
  ];
  const partly = [
    'call.tool == "transfer-2" && call.arguments.amount > 100',
    'has(principal.claims.groups) && "sre-3" in principal.claims.groups',
    'principal.claims.org == "acme" || principal.sub == "alice"',
  ];
  const cel = [
    "call.arguments.amount > 100",
    'principal.claims.org == "acme"',
    "call.body_bytes > 2.5",
    'call.tool + "x" == "transfer-2x"',
    "now > timestamp('2020-01-01T00:00:00Z')",
  ];

  it("give CEL's answer on calls with and without the optional fields", () => {
    for (const expr of [...direct, ...partly, ...cel]) {
      for (const input of CALLS)
        expect(byMatcher(expr, input), `${expr} on ${input.principal.sub}`).toBe(byCel(expr, input));
    }
  });

  it("decide whole shapes alone, an && or || by its direct side when that side decides it", () => {
    for (const expr of direct) {
      const d = compileCondition(expr, "when").direct;
      for (const input of CALLS) expect(typeof d?.(input), expr).toBe("boolean");
    }
    const d = compileCondition(partly[0] as string, "when").direct;
    expect(d?.(call({ mcpTool: "other" }))).toBe(false);
    expect(d?.(call())).toBeNull();
    for (const expr of cel) expect(compileCondition(expr, "when").direct, expr).toBeNull();
  });

  it("refuse every condition of a call whose claims cannot be read, as CEL does", () => {
    // Past CEL_LIMITS.maxValueEntries: the claims cannot be read.
    const wide = Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`c${i}`, i]));
    const input = call({ principal: { sub: "alice", scopes: [], claims: wide } });
    for (const expr of direct) expect(byMatcher(expr, input), expr).toBe(byCel(expr, input));
    expect(byCel(direct[1] as string, input)).toBe("error");
  });
});
