import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { compilePolicy, matchPolicy, PolicyDocument, type PolicyInput, toolListed } from "../src/index.ts";

const compile = (doc: unknown, version = 1) => compilePolicy(v.parse(PolicyDocument, doc), version);
const call = (tool: string, toolStatus?: string): PolicyInput => ({
  tenantId: "t1",
  agentId: "agt_a",
  protocol: "mcp",
  rpcMethod: "tools/call",
  mcpTool: tool,
  model: null,
  bodySize: 10,
  principal: { sub: "user-1", scopes: [], claims: {} },
  agentName: "agent",
  mode: "streaming",
  arguments: undefined,
  ...(toolStatus === undefined ? {} : { toolStatus }),
});

describe("tool_status condition", () => {
  it("is validated: a non-empty list of the five statuses", () => {
    expect(
      v.safeParse(PolicyDocument, { rules: [{ action: "deny", match: { tool_status: ["drifted"] } }] })
        .success,
    ).toBe(true);
    for (const bad of [[], ["stale"], "drifted"]) {
      expect(
        v.safeParse(PolicyDocument, { rules: [{ action: "deny", match: { tool_status: bad } }] }).success,
      ).toBe(false);
    }
  });

  it("holds when the called tool's status is listed; never without a status", () => {
    const p = compile({ rules: [{ action: "deny", match: { tool_status: ["drifted", "unknown"] } }] });
    expect(p.usesToolStatus).toBe(true);
    expect(matchPolicy(p, call("a", "drifted")).decision?.action).toBe("deny");
    expect(matchPolicy(p, call("a", "unknown")).decision?.action).toBe("deny");
    expect(matchPolicy(p, call("a", "pinned")).decision?.action).toBe("allow");
    expect(matchPolicy(p, call("a")).decision?.action).toBe("allow");
    expect(compile({ rules: [{ action: "deny", match: { tools: ["a"] } }] }).usesToolStatus).toBe(false);
  });
});

describe("toolListed: the rule walk of a per-caller tool list", () => {
  const facts = { tenantId: "t1", agentId: "agt_a" };

  it("a rule that holds decides; one that does not hold is skipped; no rule gives the default", () => {
    const p = compile({
      default: "deny",
      rules: [
        { action: "deny", match: { tools: ["admin_*"] } },
        { action: "deny", match: { agents: ["agt_b"], tools: ["search"] } },
        { action: "warn", match: { tools: ["search", "fetch"] } },
      ],
    });
    expect(toolListed(p, facts, "admin_drop", "unpinned")).toBe(false);
    expect(toolListed(p, facts, "search", "unpinned")).toBe(true);
    expect(toolListed(p, { tenantId: "t1", agentId: "agt_b" }, "search", "unpinned")).toBe(false);
    expect(toolListed(p, facts, "fetch", "unpinned")).toBe(true);
    expect(toolListed(p, facts, "other", "unpinned")).toBe(false);
  });

  it("a limit rule decides nothing: a limited tool stays listed when the rules after it let it through", () => {
    const limit = { requests: 1, per: "day" };
    const p = compile({
      default: "deny",
      rules: [
        { action: "limit", match: { tools: ["search", "drop"] }, limit },
        { action: "allow", match: { tools: ["search"] } },
        { action: "limit", match: { tools: ["fetch"] }, limit },
      ],
    });
    expect(toolListed(p, facts, "search", "unpinned")).toBe(true);
    // No deciding rule holds for these: the default (deny) omits them, limited or not.
    expect(toolListed(p, facts, "drop", "unpinned")).toBe(false);
    expect(toolListed(p, facts, "fetch", "unpinned")).toBe(false);
    const open = compile({ rules: [{ action: "limit", match: { tools: ["search"] }, limit }] });
    expect(toolListed(open, facts, "search", "unpinned")).toBe(true);
    expect(matchPolicy(open, call("search")).decision).toMatchObject({ action: "allow", matchedRule: "" });
  });

  it("only deny omits: a tool whose deciding rule is warn or require_approval stays listed", () => {
    const p = compile({
      default: "deny",
      rules: [
        { action: "require_approval", match: { tools: ["transfer"] } },
        { action: "warn", match: { tools: ["search"] } },
        { action: "deny", match: { tools: ["*"] } },
      ],
    });
    expect(toolListed(p, facts, "transfer", "unpinned")).toBe(true);
    expect(toolListed(p, facts, "search", "unpinned")).toBe(true);
    expect(toolListed(p, facts, "other", "unpinned")).toBe(false);
  });

  it("a rule that needs the arguments or asks a classifier lists the tool; so do rules of other methods and protocols", () => {
    const p = compile({
      default: "deny",
      rules: [
        { action: "deny", match: { methods: ["resources/read"] } },
        { action: "deny", match: { protocols: ["http"] } },
        { action: "deny", match: { tools: ["big"], max_body_bytes: 100 } },
        { classifier: { url: "https://classifier.example/" }, match: { tools: ["judged"] } },
      ],
    });
    expect(toolListed(p, facts, "big", "unpinned")).toBe(true);
    expect(toolListed(p, facts, "judged", "unpinned")).toBe(true);
    expect(toolListed(p, facts, "anything", "unpinned")).toBe(false);
  });

  it("judges tool_status with the status given, and memoises per policy version", () => {
    const p1 = compile({ rules: [{ action: "deny", match: { tool_status: ["drifted"] } }] }, 1);
    expect(toolListed(p1, facts, "a", "drifted")).toBe(false);
    expect(toolListed(p1, facts, "a", "pinned")).toBe(true);
    const p2 = compile({ rules: [{ action: "deny", match: { tool_status: ["pinned"] } }] }, 2);
    expect(toolListed(p2, facts, "a", "pinned")).toBe(false);
    expect(toolListed(p1, facts, "a", "pinned")).toBe(true);
  });

  it("judges a condition on the caller for the caller who lists; lists the tool when it needs the arguments, the clock, or an unknown caller", () => {
    const p = compile({
      default: "allow",
      rules: [
        { action: "deny", match: { tools: ["admin_*"] }, when: '!("admin" in principal.scopes)' },
        { action: "deny", match: { tools: ["transfer"] }, when: "call.arguments.amount > 100.0" },
        { action: "deny", match: { tools: ["night"] }, when: "now > timestamp('2000-01-01T00:00:00Z')" },
        { action: "deny", match: { tools: ["free_only"] }, when: "call.price == null" },
      ],
    });
    const as = (scopes: string[]) => ({
      ...facts,
      caller: { principal: { sub: "u", scopes, claims: {} }, agentName: "a", mode: "streaming" as const },
    });
    expect(toolListed(p, as([]), "admin_drop", "unpinned")).toBe(false);
    expect(toolListed(p, as(["admin"]), "admin_drop", "unpinned")).toBe(true);
    // The same tool for another caller is judged again, not served from the first caller's memo.
    expect(toolListed(p, as([]), "admin_drop", "unpinned")).toBe(false);
    expect(toolListed(p, as([]), "transfer", "unpinned")).toBe(true);
    expect(toolListed(p, as([]), "night", "unpinned")).toBe(true);
    // The price is the call's (the agent's tool prices): a list does not judge it.
    expect(toolListed(p, as([]), "free_only", "unpinned")).toBe(true);
    // A collected answer in the worker: the caller is not known, so a condition cannot be judged.
    expect(toolListed(p, facts, "admin_drop", "unpinned")).toBe(true);
  });
});
