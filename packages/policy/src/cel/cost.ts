import type { ASTNode } from "@marcbachmann/cel-js";
import { CEL_LIMITS } from "./limits.ts";

const MACROS = new Set(["all", "exists", "exists_one", "map", "filter"]);
/** Functions and operators whose time grows with a string's or a list's length. */
const SCANS = new Set(["contains", "startsWith", "endsWith", "indexOf", "lastIndexOf", "replace", "split"]);
const SCAN_OPS = new Set(["==", "!=", "in", "+", "<", "<=", ">", ">="]);
/** What a scan of a value of unknown length counts: strings are long, lists hold up to maxValueEntries. */
const SCAN_COST = 64;

/**
 * A worst-case estimate of the evaluation steps of a parsed expression, in the manner of CEL's own
 * cost estimation (cel-go, Kubernetes validation rules): every node counts one, a scan of a value
 * of unknown length counts SCAN_COST, and a comprehension counts its body once per element of the
 * largest value it may range over: the literal's length, or CEL_LIMITS.maxValueEntries for call
 * data (the bound the call's variables are built under). Compared with CEL_LIMITS.maxCost at write
 * time, so that no accepted expression can run unbounded.
 */
export function estimateCost(node: ASTNode): number {
  switch (node.op) {
    case "value":
    case "id":
      return 1;
    case "rcall": {
      const [name, receiver, args] = node.args;
      const inner = sum(args);
      if (MACROS.has(name)) return 1 + estimateCost(receiver) + sizeOf(receiver) * (1 + inner);
      return 1 + estimateCost(receiver) + inner + (SCANS.has(name) ? SCAN_COST : 0);
    }
    case "call": {
      const [name, args] = node.args;
      return 1 + sum(args) + (SCANS.has(name) ? SCAN_COST : 0);
    }
    case "list":
      return 1 + sum(node.args);
    case "map":
      return 1 + node.args.reduce((n, [k, v]) => n + estimateCost(k) + estimateCost(v), 0);
    case ".":
    case ".?":
      return 1 + estimateCost(node.args[0]);
    case "!_":
    case "-_":
      return 1 + estimateCost(node.args);
    case "?:":
      return 1 + sum(node.args);
    default: {
      const [a, b] = node.args;
      const literal = a.op === "value" && b.op === "value";
      return 1 + estimateCost(a) + estimateCost(b) + (SCAN_OPS.has(node.op) && !literal ? SCAN_COST : 0);
    }
  }
}

function sum(nodes: readonly ASTNode[]): number {
  let n = 0;
  for (const x of nodes) n += estimateCost(x);
  return n;
}

/** The most elements a comprehension over this node may visit. */
function sizeOf(node: ASTNode): number {
  if (node.op === "list") return node.args.length;
  if (node.op === "map") return node.args.length;
  if (node.op === "rcall" && (node.args[0] === "map" || node.args[0] === "filter")) {
    return sizeOf(node.args[1]);
  }
  if (node.op === "+") return sizeOf(node.args[0]) + sizeOf(node.args[1]);
  return CEL_LIMITS.maxValueEntries;
}

/** Names of the functions an expression calls (to refuse the ones policy does not offer). */
export function calledFunctions(node: ASTNode, out = new Set<string>()): Set<string> {
  if (node.op === "call") out.add(node.args[0]);
  if (node.op === "rcall") out.add(node.args[0]);
  walkChildren(node, (c) => calledFunctions(c, out));
  return out;
}

function walkChildren(node: ASTNode, visit: (n: ASTNode) => void): void {
  const args: unknown = node.args;
  const each = (x: unknown) => {
    if (Array.isArray(x)) for (const y of x) each(y);
    else if (x !== null && typeof x === "object" && "op" in x) visit(x as ASTNode);
  };
  if (node.op !== "value") each(args);
}
