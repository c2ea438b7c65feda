import type { ASTNode } from "@marcbachmann/cel-js";
import type { PolicyInput } from "../input.ts";
import { stringField } from "./direct-key.ts";
import { claimsOfInput } from "./variables.ts";

type Node = { op: string; args: unknown };
type Test = (input: PolicyInput) => boolean;

/**
 * A condition read from the call without CEL: true or false as CEL would give, or null when
 * only CEL can tell (the caller then evaluates the whole expression). The CEL variables refuse
 * every condition of a call whose claims cannot be read (`on_error`): the caller asks
 * `unreadableClaims` first, once per call, as it would build the variables once.
 */
export type DirectCondition = (input: PolicyInput) => boolean | null;

const STRING_TESTS: Readonly<Record<string, (s: string, literal: string) => boolean>> = {
  startsWith: (s, l) => s.startsWith(l),
  endsWith: (s, l) => s.endsWith(l),
  contains: (s, l) => s.includes(l),
};

const COMPARE: Readonly<Record<string, (a: number, b: number) => boolean>> = {
  "==": (a, b) => a === b,
  "!=": (a, b) => a !== b,
  "<": (a, b) => a < b,
  "<=": (a, b) => a <= b,
  ">": (a, b) => a > b,
  ">=": (a, b) => a >= b,
};
const MIRRORED: Readonly<Record<string, string>> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=" };

/**
 * The usual shapes of a `when` (docs/policy.md "Conditions") over the call's fields that are
 * always present with one type: a string field compared with a string literal (`==`, `!=`,
 * `startsWith`, `endsWith`, `contains`), `"x" in principal.scopes`, `call.body_bytes` against an
 * int literal, `has(principal.claims.x)`, and `!`, `&&`, `||` of those. None of them can fail,
 * so JavaScript's operators give CEL's answer. An `&&` (`||`) with one such side and any other
 * is decided when that side is false (true), which CEL's commutative `&&` (`||`) decides too,
 * whatever the other side gives; else CEL evaluates the expression. Null: no shape of these.
 */
export function directCondition(ast: ASTNode): DirectCondition | null {
  const node = ast as unknown as Node;
  const whole = test(node);
  if (whole) return whole;
  if ((node.op === "&&" || node.op === "||") && Array.isArray(node.args)) {
    const sides = (node.args as Node[]).map(test).filter((t): t is Test => t !== null);
    const side = sides[0];
    if (!side) return null;
    // The side's value that decides the whole: false for &&, true for ||.
    const decides = node.op === "||";
    return (input) => (side(input) === decides ? decides : null);
  }
  return null;
}

function test(node: Node): Test | null {
  const args = node.args;
  switch (node.op) {
    case "&&":
    case "||": {
      const [a, b] = (args as Node[]).map(test);
      if (!a || !b) return null;
      return node.op === "&&" ? (i) => a(i) && b(i) : (i) => a(i) || b(i);
    }
    case "!_": {
      const a = test(args as Node);
      return a ? (i) => !a(i) : null;
    }
    case "==":
    case "!=":
      return equality(node.op, args as [Node, Node]) ?? bodyBytes(node.op, args as [Node, Node]);
    case "<":
    case "<=":
    case ">":
    case ">=":
      return bodyBytes(node.op, args as [Node, Node]);
    case "in":
      return inScopes(args as [Node, Node]);
    case "rcall":
      return stringTest(args as [string, Node, Node[]]);
    case "call":
      return hasClaim(args as [string, Node[]]);
    default:
      return null;
  }
}

const literal = (n: Node | undefined): string | null =>
  n?.op === "value" && typeof n.args === "string" ? n.args : null;

/** `field == "x"`, `"x" != field`. */
function equality(op: "==" | "!=", [a, b]: [Node, Node]): Test | null {
  const field = stringField(a) ?? stringField(b);
  const text = literal(b) ?? literal(a);
  if (!field || text === null) return null;
  return op === "==" ? (i) => field(i) === text : (i) => field(i) !== text;
}

/** `call.body_bytes > 1000000` (an int literal either side; -1 when the size is unknown). */
function bodyBytes(op: string, [a, b]: [Node, Node]): Test | null {
  const isBytes = (n: Node) => {
    const [of, name] = Array.isArray(n.args) ? (n.args as [Node, unknown]) : [];
    return n.op === "." && of?.op === "id" && of.args === "call" && name === "body_bytes";
  };
  const int = (n: Node) => (n.op === "value" && typeof n.args === "bigint" ? n.args : null);
  const mirrored = !isBytes(a);
  const value = mirrored ? int(a) : int(b);
  if (!isBytes(mirrored ? b : a) || value === null) return null;
  // Beyond 2^53 a double could round the literal: CEL's own compare then.
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < -BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const compare = COMPARE[mirrored ? (MIRRORED[op] ?? op) : op];
  if (!compare) return null;
  const limit = Number(value);
  return (i) => compare(i.bodySize ?? -1, limit);
}

/** `"x" in principal.scopes`. */
function inScopes([a, b]: [Node, Node]): Test | null {
  const text = literal(a);
  const [of, name] = Array.isArray(b?.args) ? (b.args as [Node, unknown]) : [];
  if (text === null || b?.op !== "." || of?.op !== "id" || of.args !== "principal" || name !== "scopes")
    return null;
  return (i) => i.principal.scopes.includes(text);
}

/** `field.startsWith("x")`, `endsWith`, `contains`. */
function stringTest([name, target, args]: [string, Node, Node[]]): Test | null {
  const fn = Object.hasOwn(STRING_TESTS, name) ? STRING_TESTS[name] : undefined;
  const field = target ? stringField(target) : null;
  const text = Array.isArray(args) && args.length === 1 ? literal(args[0]) : null;
  if (!fn || !field || text === null) return null;
  return (i) => fn(field(i), text);
}

/** `has(principal.claims.x)`: whether the token carries that claim. */
function hasClaim([name, args]: [string, Node[]]): Test | null {
  if (name !== "has" || !Array.isArray(args) || args.length !== 1) return null;
  const arg = args[0] as Node;
  const [claims, key] = Array.isArray(arg.args) ? (arg.args as [Node, unknown]) : [];
  const [principal, field] = Array.isArray(claims?.args) ? (claims.args as [Node, unknown]) : [];
  if (arg.op !== "." || typeof key !== "string" || claims?.op !== "." || field !== "claims") return null;
  if (principal?.op !== "id" || principal.args !== "principal") return null;
  return (i) => {
    const map = claimsOfInput(i);
    return !(map instanceof Error) && map.has(key);
  };
}
