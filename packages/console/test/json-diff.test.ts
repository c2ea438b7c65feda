import { describe, expect, it } from "vitest";
import { jsonDiff } from "../web/json-diff.ts";

// The audit screen's reading of a replace or an update (docs/console.md, Audit): the paths that
// changed, never the two whole documents.

const rule = (tool: string, action = "warn") => ({ action, match: { tools: [tool] } });
const policy = (...rules: unknown[]) => ({ default: "allow", on_error: "deny", rules });

describe("jsonDiff", () => {
  it("finds nothing between equal values, whatever their key order", () => {
    expect(jsonDiff(policy(rule("a")), policy(rule("a")))).toEqual([]);
    expect(jsonDiff({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 })).toEqual([]);
  });

  it("names each changed, added and removed value by its path", () => {
    const before = { default: "allow", rules: [rule("a")], limits: { x: 1 } };
    const after = { default: "deny", rules: [rule("a", "deny")], answer_rules: [] };
    expect(jsonDiff(before, after, "document")).toEqual([
      { kind: "changed", path: "document.default", from: "allow", to: "deny" },
      { kind: "changed", path: "document.rules[0].action", from: "warn", to: "deny" },
      { kind: "removed", path: "document.limits", from: { x: 1 } },
      { kind: "added", path: "document.answer_rules", to: [] },
    ]);
  });

  it("reads a rule inserted or removed as that one rule, not every rule after it", () => {
    const three = policy(rule("a"), rule("b"), rule("c"));
    expect(jsonDiff(three, policy(rule("new"), rule("a"), rule("b"), rule("c")))).toEqual([
      { kind: "added", path: "rules[0]", to: rule("new") },
    ]);
    expect(jsonDiff(three, policy(rule("a"), rule("c")))).toEqual([
      { kind: "removed", path: "rules[1]", from: rule("b") },
    ]);
    // Replaced in place: compared inside, at its new position.
    expect(jsonDiff(three, policy(rule("a"), rule("B"), rule("c")))).toEqual([
      { kind: "changed", path: "rules[1].match.tools[0]", from: "b", to: "B" },
    ]);
  });

  it("replaces a value of another type whole; null is a value added or removed", () => {
    expect(jsonDiff({ key: { a: 1 } }, { key: "a" })).toEqual([
      { kind: "changed", path: "key", from: { a: 1 }, to: "a" },
    ]);
    expect(jsonDiff(null, { a: 1 }, "document")).toEqual([{ kind: "added", path: "document", to: { a: 1 } }]);
    expect(jsonDiff({ a: 1 }, null, "document")).toEqual([
      { kind: "removed", path: "document", from: { a: 1 } },
    ]);
    expect(jsonDiff({ "odd key": 1 }, { "odd key": 2 })).toEqual([
      { kind: "changed", path: '["odd key"]', from: 1, to: 2 },
    ]);
  });

  it("compares arrays too long to align index by index", () => {
    const long = Array.from({ length: 600 }, (_, i) => i);
    const shifted = [-1, ...long.slice(0, 599)];
    const changes = jsonDiff(long, shifted, "xs");
    expect(changes).toHaveLength(600);
    expect(changes[0]).toEqual({ kind: "changed", path: "xs[0]", from: 0, to: -1 });
    expect(jsonDiff(long, [...long, 600], "xs")).toEqual([{ kind: "added", path: "xs[600]", to: 600 }]);
  });
});
