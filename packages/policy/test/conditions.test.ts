import { DomainError } from "@gw/core";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { CEL_LIMITS, compilePolicy, matchPolicy, PolicyDocument, type PolicyInput } from "../src/index.ts";

const call = (over: Partial<PolicyInput> = {}): PolicyInput => ({
  tenantId: "t1",
  agentId: "agt_a",
  protocol: "mcp",
  rpcMethod: "tools/call",
  mcpTool: "transfer",
  model: null,
  bodySize: 100,
  principal: { sub: "alice", scopes: ["payments:write"], claims: { groups: ["finance"], level: 3 } },
  agentName: "bank",
  mode: "streaming",
  arguments: { amount: 150, to: "bob", path: "/etc/passwd" },
  ...over,
});

const policy = (when: string, extra: object = {}) =>
  compilePolicy(v.parse(PolicyDocument, { rules: [{ action: "deny", when, ...extra }] }), 1);

const decide = (when: string, input: PolicyInput = call()) => matchPolicy(policy(when), input).decision;

function refusal(when: string): string {
  try {
    policy(when);
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    return (e as Error).message;
  }
  throw new Error("expected the condition to be refused");
}

describe("when: compiled and type-checked at write time", () => {
  it("refuses an expression that does not parse, naming the rule and where", () => {
    expect(refusal("call.tool ==")).toBe("rules.0.when is not a valid CEL expression at character 13");
  });
  it("refuses unknown variables and fields, and wrong types", () => {
    expect(refusal('user.name == "x"')).toBe("rules.0.when uses an unknown variable at character 1");
    expect(refusal('principal.nme == "x"')).toMatch(/^rules\.0\.when uses an unknown field/);
    expect(refusal("principal.sub > 1")).toMatch(
      /^rules\.0\.when applies an operator or function to the wrong types/,
    );
    expect(refusal('principal.sub + "x"')).toBe("rules.0.when must evaluate to a bool, not string");
  });
  it("refuses an expression over the length limit", () => {
    const long = `call.tool == "${"x".repeat(CEL_LIMITS.maxExpressionLength)}"`;
    expect(refusal(long)).toBe(`rules.0.when must be at most ${CEL_LIMITS.maxExpressionLength} characters`);
  });
  it("refuses comprehensions nested over call data (they could run unbounded) and matches()", () => {
    expect(refusal("call.arguments.items.all(x, call.arguments.items.exists(y, x == y))")).toMatch(
      /^rules\.0\.when may be too costly to evaluate/,
    );
    expect(refusal('call.tool.matches("(a+)+$")')).toMatch(/^rules\.0\.when must not call matches\(\)/);
    // Nesting over small literals is fine.
    expect(() => policy("[1, 2, 3].all(x, [4, 5].exists(y, x < y))")).not.toThrow();
  });
});

describe("when: evaluated per call", () => {
  it("sees the caller's scopes and claims", () => {
    expect(decide('"payments:write" in principal.scopes')?.action).toBe("deny");
    expect(decide('"admin" in principal.scopes')?.reason).toBe("default");
    expect(
      decide('principal.claims.groups.exists(g, g == "finance") && principal.sub == "alice"')?.action,
    ).toBe("deny");
  });
  it("sees the tool's arguments (JSON numbers compare with ints)", () => {
    expect(decide('call.tool == "transfer" && call.arguments.amount > 100')?.action).toBe("deny");
    expect(decide("call.arguments.amount > 1000")?.reason).toBe("default");
    expect(decide('call.arguments.path.startsWith("/etc")')?.matchedRule).toBe("1");
    expect(decide('has(call.arguments.missing) && call.arguments.missing == "x"')?.reason).toBe("default");
  });
  it("has every variable present for a non-MCP call", () => {
    const http = call({
      protocol: "http",
      rpcMethod: null,
      mcpTool: null,
      arguments: undefined,
      bodySize: null,
    });
    expect(
      decide(
        'call.tool == "" && call.method == "" && size(call.arguments) == 0 && call.body_bytes == -1 && tool.status == "" && agent.protocol == "http"',
        http,
      )?.action,
    ).toBe("deny");
    expect(decide('tool.status == "unknown" && now > timestamp("2020-01-01T00:00:00Z")')?.action).toBe(
      "deny",
    );
  });
  it("an evaluation error decides on_error, matched rule empty, naming the rule", () => {
    const p = compilePolicy(
      v.parse(PolicyDocument, {
        on_error: "warn",
        rules: [
          { action: "allow", match: { tools: ["other"] } },
          { action: "deny", when: "call.arguments.nope == 1" },
        ],
      }),
      1,
    );
    expect(matchPolicy(p, call()).decision).toEqual({
      action: "warn",
      matchedRule: "",
      reason: "rule 2: condition could not be evaluated",
    });
  });
  it("arguments that are deep, huge or not objects make only the conditions that read them fail", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = { d: deep };
    const huge = { items: Array.from({ length: CEL_LIMITS.maxValueEntries + 1 }, (_, i) => i) };
    for (const args of [deep, huge, [1, 2], "text", null]) {
      const input = call({ arguments: args });
      expect(decide("size(call.arguments) >= 0", input)?.reason).toBe(
        "rule 1: condition could not be evaluated",
      );
      expect(decide('principal.sub == "alice"', input)?.action).toBe("deny");
    }
  });
  it("a comprehension over the largest list allowed ends (bounded)", () => {
    const items = Array.from({ length: CEL_LIMITS.maxValueEntries }, (_, i) => `item-${i}`);
    const input = call({ arguments: { items } });
    expect(decide('call.arguments.items.all(x, x.startsWith("item-"))', input)?.action).toBe("deny");
    expect(decide('call.arguments.items.filter(x, x.endsWith("9")).size() > 50', input)?.action).toBe("deny");
  });
  it("a policy without conditions matches as before", () => {
    const p = compilePolicy(
      v.parse(PolicyDocument, { rules: [{ action: "warn", match: { tools: ["transfer"] } }] }),
      1,
    );
    expect(matchPolicy(p, call()).decision?.action).toBe("warn");
  });
});
