import { invalid } from "@gw/core";
import type { ASTNode } from "@marcbachmann/cel-js";
import type { PolicyInput } from "../input.ts";
import { calledFunctions, estimateCost } from "./cost.ts";
import { type DirectCondition, directCondition } from "./direct-condition.ts";
import { directKey } from "./direct-key.ts";
import { type CelVariables, checkEnv, runEnv } from "./env.ts";
import { CEL_LIMITS } from "./limits.ts";

/** A compiled `when`: evaluation throws on any error (the caller turns it into `on_error`). */
export type CompiledCondition = {
  readonly holds: (vars: CelVariables) => boolean;
  /** Whether the expression can read `call.arguments` (only then are they converted). */
  readonly readsArguments: boolean;
  /** Whether it can read `now` (its outcome then changes with time: never memoised). */
  readonly readsClock: boolean;
  /** Whether it can read `call.price` (a per-caller tool list cannot tell it: the tool stays listed). */
  readonly readsPrice: boolean;
  /**
   * The condition read from the call itself when its shape allows (direct-condition.ts): no CEL
   * variables built, no expression walked; null (or a null answer) leaves it to `holds`.
   */
  readonly direct: DirectCondition | null;
};

/**
 * Functions the policy does not offer. `matches` runs the host's backtracking regular expressions,
 * whose time on a crafted pattern and input has no bound; startsWith, endsWith and contains cover
 * the policy cases (docs/adr/0026-cel-library.md).
 */
const REFUSED = new Set(["matches"]);

/**
 * Parses, type-checks and bounds one `when` expression, once per policy version. Any problem →
 * 400 naming `field` and, where the expression is at fault, the character position, in the
 * project's own words (never the library's message or the expression's text).
 */
export function compileCondition(expr: string, field: string): CompiledCondition {
  const parsed = compileExpression(expr, field, "bool");
  return Object.freeze({
    holds: (vars: CelVariables) => {
      const r: unknown = parsed(vars);
      if (typeof r !== "boolean") throw new Error("condition did not evaluate to a bool");
      return r;
    },
    readsArguments: /\barguments\b/.test(expr),
    readsClock: /\bnow\b/.test(expr),
    readsPrice: /\bprice\b/.test(expr),
    direct: directCondition(parsed.ast as ASTNode),
  });
}

/** A compiled quota key (`limit.key`): evaluation throws on any error or a non-string value. */
export type CompiledKey = {
  readonly valueOf: (vars: CelVariables) => string;
  readonly readsArguments: boolean;
  /** The key as a function of the call itself, when it is that simple (direct-key.ts); else null. */
  readonly direct: ((input: PolicyInput) => string) | null;
};

/**
 * Parses, type-checks and bounds a `limit.key` expression like a condition, but it must evaluate
 * to a string (`dyn`, e.g. a claim, is checked on each call: anything else → `on_error`).
 */
export function compileKey(expr: string, field: string): CompiledKey {
  const parsed = compileExpression(expr, field, "string");
  return Object.freeze({
    valueOf: (vars: CelVariables) => {
      const r: unknown = parsed(vars);
      if (typeof r !== "string") throw new Error("key did not evaluate to a string");
      return r;
    },
    readsArguments: /\barguments\b/.test(expr),
    direct: directKey(runEnv.parse(expr).ast as ASTNode),
  });
}

function compileExpression(expr: string, field: string, type: "bool" | "string") {
  if (expr.length > CEL_LIMITS.maxExpressionLength) {
    throw invalid(`${field} must be at most ${CEL_LIMITS.maxExpressionLength} characters`);
  }
  const checked = checkEnv.check(expr);
  if (!checked.valid) throw invalid(`${field} ${describe(checked.error)}`);
  if (checked.type !== type && checked.type !== "dyn") {
    throw invalid(`${field} must evaluate to a ${type}, not ${checked.type ?? "another type"}`);
  }
  const parsed = runEnv.parse(expr);
  const ast = parsed.ast as ASTNode;
  for (const name of calledFunctions(ast)) {
    if (REFUSED.has(name))
      throw invalid(`${field} must not call ${name}() (use startsWith, endsWith or contains)`);
  }
  if (estimateCost(ast) > CEL_LIMITS.maxCost) {
    throw invalid(
      `${field} may be too costly to evaluate (a comprehension over call data nested in another, or a very large expression)`,
    );
  }
  return parsed;
}

type CelError = { name?: string; code?: string; summary?: string; range?: { start: number } };

/** A parse or type error in the project's words, with where it is (1-based character). */
function describe(error: unknown): string {
  const e = (error ?? {}) as CelError;
  const at = typeof e.range?.start === "number" ? ` at character ${e.range.start + 1}` : "";
  const summary = e.summary ?? "";
  if (e.name === "ParseError") {
    if (e.code === "limit_exceeded") return `is too large or nested too deeply${at}`;
    return `is not a valid CEL expression${at}`;
  }
  if (/^Unknown variable/i.test(summary)) return `uses an unknown variable${at}`;
  if (/^No such key/i.test(summary)) return `uses an unknown field${at}`;
  if (/^no (such|matching) overload/i.test(summary))
    return `applies an operator or function to the wrong types${at}`;
  return `does not type-check${at}`;
}
