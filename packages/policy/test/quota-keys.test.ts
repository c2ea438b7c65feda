import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { callVariables } from "../src/cel/variables.ts";
import { compilePolicy, limitsOf, PolicyDocument, type PolicyInput } from "../src/index.ts";

const call = (over: Partial<PolicyInput> = {}): PolicyInput => ({
  tenantId: "t1",
  agentId: "agt_a",
  protocol: "mcp",
  rpcMethod: "tools/call",
  mcpTool: "transfer",
  model: null,
  bodySize: 100,
  principal: { sub: "alice", scopes: [], claims: { org: "acme" } },
  agentName: "bank",
  mode: "streaming",
  arguments: undefined,
  ...over,
});

const limited = (key: string) =>
  compilePolicy(
    v.parse(PolicyDocument, { rules: [{ action: "limit", limit: { requests: 5_000, per: "day", key } }] }),
    1,
  );

describe("quota keys of fields and literals, read without CEL", () => {
  const simple = [
    '"tenant"',
    "agent.name",
    'principal.sub + "/" + agent.name',
    'principal.sub + "/" + call.mode',
    "principal.tenant + agent.id + agent.protocol + call.method + call.tool + call.model",
  ];

  it("give the value CEL gives, on calls with and without the optional fields", () => {
    const calls = [call(), call({ rpcMethod: null, mcpTool: null, model: "m", mode: "transactional" })];
    for (const key of simple) {
      const policy = limited(key);
      const compiled = policy.limits[0]?.key;
      expect(compiled?.direct, key).not.toBeNull();
      for (const input of calls) {
        const byCel = compiled?.valueOf(callVariables(input).forCondition(false));
        expect(limitsOf(policy, input).charges[0]?.key, key).toBe(byCel);
      }
    }
  });

  it("leave any other expression to CEL", () => {
    for (const key of [
      "principal.claims.org",
      'call.tool.startsWith("t") ? "a" : "b"',
      "string(call.body_bytes)",
    ]) {
      expect(limited(key).limits[0]?.key?.direct, key).toBeNull();
    }
    expect(limitsOf(limited("principal.claims.org"), call()).charges[0]?.key).toBe("acme");
  });

  it("still give on_error when the call's claims cannot be read, as CEL keys do", () => {
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 100; i++) {
      const next = {};
      at.n = next;
      at = next;
    }
    const input = call({ principal: { sub: "alice", scopes: [], claims: deep } });
    const { charges, error } = limitsOf(limited("agent.name"), input);
    expect(charges).toEqual([]);
    expect(error?.action).toBe("deny");
  });
});
