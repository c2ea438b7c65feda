/**
 * Bounds of `when` conditions (docs/policy.md "Conditions"). CEL has no loops of its own, only
 * comprehensions over lists and maps, so time is bounded by the expression's size, the sizes of
 * the values it can range over, and how deeply comprehensions nest. All three are capped: the
 * expression at write time (length, syntax tree, estimated cost), the values when a call's
 * variables are built.
 */
export const CEL_LIMITS = Object.freeze({
  /** Characters of one expression. */
  maxExpressionLength: 2_048,
  /** Nodes of the parsed expression and their nesting. */
  maxAstNodes: 512,
  maxDepth: 32,
  /** Elements of a list or map literal written in the expression. */
  maxLiteralEntries: 256,
  /**
   * Estimated worst-case evaluation steps of one expression (see cost.ts): a comprehension costs
   * its body once per element of the largest value it could range over. One level over call
   * arguments passes; a comprehension nested in another over call data does not.
   */
  maxCost: 100_000,
  /** Entries of one list or map in the call's variables (arguments, claims). */
  maxValueEntries: 1_000,
  /** Values in all of one call's arguments (or one token's claims) together. */
  maxValues: 10_000,
  /** Nesting of arguments and claims. */
  maxValueDepth: 32,
  /** Characters of one string in the call's variables. */
  maxStringLength: 1_048_576,
});
