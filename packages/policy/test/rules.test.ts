import { Agent } from "undici";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import {
  compilePolicy,
  evaluatePolicy,
  matchPolicy,
  PolicyDocument,
  type PolicyInput,
} from "../src/index.ts";

const mcp = (tool: string | null, method = "tools/call", agentId = "agt_a"): PolicyInput => ({
  tenantId: "t1",
  agentId,
  protocol: "mcp",
  rpcMethod: method,
  mcpTool: tool,
  model: null,
  bodySize: 100,
  principal: { sub: "u", scopes: [], claims: {} },
  agentName: "a",
  mode: "streaming",
  arguments: undefined,
});
const http = (bodySize: number | null = 100, agentId = "agt_a"): PolicyInput => ({
  tenantId: "t1",
  agentId,
  protocol: "http",
  rpcMethod: null,
  mcpTool: null,
  model: "m",
  bodySize,
  principal: { sub: "u", scopes: [], claims: {} },
  agentName: "a",
  mode: "streaming",
  arguments: undefined,
});

const compile = (doc: unknown) => compilePolicy(v.parse(PolicyDocument, doc), 1);
// A dispatcher no rule in this table uses: only classifier rules dial.
const dispatcher = new Agent();

type Case = [name: string, doc: unknown, input: PolicyInput, action: string, matchedRule: string];

const R = (action: string, match: Record<string, unknown> = {}) => ({ action, match });

const table: Case[] = [
  ["no rules: the default applies (allow by default)", { rules: [] }, http(), "allow", ""],
  ["no rules, default deny", { default: "deny", rules: [] }, http(), "deny", ""],
  ["no rules, default warn", { default: "warn", rules: [] }, mcp("x"), "warn", ""],
  ["match {} matches everything", { rules: [R("deny")] }, http(), "deny", "1"],
  ["missing match is match {}", { rules: [{ action: "warn" }] }, mcp("x"), "warn", "1"],
  ["agent listed", { rules: [R("deny", { agents: ["agt_b", "agt_a"] })] }, http(), "deny", "1"],
  ["agent not listed → default", { rules: [R("deny", { agents: ["agt_b"] })] }, http(), "allow", ""],
  ["exact tool", { rules: [R("deny", { tools: ["delete_file"] })] }, mcp("delete_file"), "deny", "1"],
  [
    "exact tool is not a prefix",
    { rules: [R("deny", { tools: ["delete"] })] },
    mcp("delete_file"),
    "allow",
    "",
  ],
  [
    "trailing * is a prefix",
    { rules: [R("deny", { tools: ["delete_*"] })] },
    mcp("delete_file"),
    "deny",
    "1",
  ],
  [
    "trailing * matches the bare prefix",
    { rules: [R("deny", { tools: ["delete_*"] })] },
    mcp("delete_"),
    "deny",
    "1",
  ],
  [
    "glob is case-sensitive",
    { rules: [R("deny", { tools: ["Delete_*"] })] },
    mcp("delete_file"),
    "allow",
    "",
  ],
  ["* alone matches any tool", { rules: [R("warn", { tools: ["*"] })] }, mcp("anything"), "warn", "1"],
  [
    "a tools condition never matches an http call",
    { rules: [R("deny", { tools: ["*"] })] },
    http(),
    "allow",
    "",
  ],
  [
    "a tools condition never matches a non-tool MCP call",
    { rules: [R("deny", { tools: ["*"] })] },
    mcp(null, "tools/list"),
    "allow",
    "",
  ],
  [
    "method listed",
    { rules: [R("deny", { methods: ["tools/list", "resources/read"] })] },
    mcp(null, "tools/list"),
    "deny",
    "1",
  ],
  [
    "method condition never matches http",
    { rules: [R("deny", { methods: ["tools/call"] })] },
    http(),
    "allow",
    "",
  ],
  ["protocol http", { rules: [R("deny", { protocols: ["http"] })] }, http(), "deny", "1"],
  ["protocol mcp does not match http", { rules: [R("deny", { protocols: ["mcp"] })] }, http(), "allow", ""],
  [
    "max_body_bytes holds when larger",
    { rules: [R("deny", { max_body_bytes: 99 })] },
    http(100),
    "deny",
    "1",
  ],
  [
    "max_body_bytes: equal is not larger",
    { rules: [R("deny", { max_body_bytes: 100 })] },
    http(100),
    "allow",
    "",
  ],
  [
    "max_body_bytes holds for an unknown (streamed) size",
    { rules: [R("deny", { max_body_bytes: 1000 })] },
    http(null),
    "deny",
    "1",
  ],
  ["max_body_bytes 0 and an empty body", { rules: [R("deny", { max_body_bytes: 0 })] }, http(0), "allow", ""],
  [
    "every condition must hold (one fails)",
    { rules: [R("deny", { agents: ["agt_a"], tools: ["rm*"], protocols: ["mcp"] })] },
    mcp("ls"),
    "allow",
    "",
  ],
  [
    "every condition must hold (all hold)",
    {
      rules: [R("deny", { agents: ["agt_a"], tools: ["rm*"], protocols: ["mcp"], methods: ["tools/call"] })],
    },
    mcp("rm_rf"),
    "deny",
    "1",
  ],
  [
    "first match wins (allow before deny)",
    { rules: [R("allow", { tools: ["rm*"] }), R("deny")] },
    mcp("rm"),
    "allow",
    "1",
  ],
  [
    "first match wins (later rule)",
    { rules: [R("allow", { tools: ["ls"] }), R("warn", { tools: ["rm*"] }), R("deny")] },
    mcp("rm"),
    "warn",
    "2",
  ],
  [
    "falls through to a catch-all",
    { rules: [R("allow", { tools: ["ls"] }), R("deny")] },
    mcp("rm"),
    "deny",
    "2",
  ],
  [
    "on_error does not apply without a classifier",
    { on_error: "allow", default: "warn", rules: [] },
    http(),
    "warn",
    "",
  ],
];

describe("policy rule table", () => {
  it("has at least 20 cases", () => expect(table.length).toBeGreaterThanOrEqual(20));
  it.each(table)("%s", async (_name, doc, input, action, matchedRule) => {
    const d = await evaluatePolicy(compile(doc), input, { dispatcher });
    expect({ action: d.action, matchedRule: d.matchedRule }).toEqual({ action, matchedRule });
  });

  it("an unmatched classifier rule is never asked; a matched one is what matchPolicy returns", () => {
    const p = compile({
      rules: [{ classifier: { url: "https://c.example/x" }, match: { tools: ["x"] } }, R("deny")],
    });
    expect(matchPolicy(p, mcp("y")).decision?.matchedRule).toBe("2");
    const m = matchPolicy(p, mcp("x"));
    expect(m.decision).toBeNull();
    expect(m.classifier).toMatchObject({ url: "https://c.example/x", timeoutMs: 2000, position: "1" });
  });

  it("evaluation of a fixed rule allocates nothing: the same frozen decision every call", () => {
    const p = compile({ rules: [R("warn", { tools: ["a*"] })] });
    expect(matchPolicy(p, mcp("ab"))).toBe(matchPolicy(p, mcp("ac")));
    expect(matchPolicy(p, mcp("zz"))).toBe(matchPolicy(p, http()));
    expect(Object.isFrozen(matchPolicy(p, mcp("ab")).decision)).toBe(true);
  });
});

describe("policy document validation", () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ rules: [{ action: "block" }] }, /rules\.0\.action/],
    [{ rules: [{ match: {} }] }, /exactly one of action or classifier/],
    [{ rules: [{ action: "deny", classifier: { url: "https://x.example" } }] }, /exactly one/],
    [{ rules: [{ action: "deny", match: { tools: ["a*b"] } }] }, /trailing \*/],
    [{ rules: [{ action: "deny", match: { tools: ["*a"] } }] }, /trailing \*/],
    [{ rules: [{ action: "deny", match: { agents: [] } }] }, /must not be empty/],
    [{ rules: [{ action: "deny", match: { protocols: ["grpc"] } }] }, /protocols/],
    [{ rules: [{ action: "deny", match: { max_body_bytes: -1 } }] }, /max_body_bytes/],
    [{ rules: [{ action: "deny", match: { max_body_bytes: 1.5 } }] }, /integer/],
    [{ rules: [{ action: "deny", match: { colour: ["red"] } }] }, /unknown field/],
    [{ rules: [{ classifier: { url: "https://x.example", timeout_ms: 10_001 } }] }, /at most 10000/],
    [{ rules: [{ classifier: { url: "https://x.example", timeout_ms: 0 } }] }, /at least 1/],
    [{ default: "maybe" }, /default/],
    [{ on_error: 1 }, /on_error/],
    [{ rules: {} }, /rules/],
    [{ rules: [], extra: true }, /unknown field/],
    [{ rules: Array.from({ length: 257 }, () => ({ action: "allow" })) }, /at most 256/],
  ];
  it.each(bad)("refuses %j", async (doc, message) => {
    const { validate } = await import("@gw/http");
    expect(() => validate(PolicyDocument, doc)).toThrow(message);
  });

  it("fills default allow and on_error deny", () => {
    expect(v.parse(PolicyDocument, {})).toEqual({ default: "allow", on_error: "deny", rules: [] });
  });
});

describe("policy document validation: arrays are not objects", () => {
  it.each([
    [[]],
    [{ rules: [[]] }],
    [{ rules: [{ action: "deny", match: [] }] }],
    [{ rules: [{ classifier: [] }] }],
  ])("refuses %j", async (doc) => {
    const { validate } = await import("@gw/http");
    expect(() => validate(PolicyDocument, doc)).toThrow(/must be a JSON object/);
  });
});
