import type * as v from "valibot";

/**
 * A validation rule in the project's own words, for an issue whose schema gave no message of its
 * own. Passed to valibot as the parse-time `message`, so its built-in text ("Invalid length:
 * Expected <=200 but received 10000"), which quotes or measures the value received, never reaches
 * a caller, a log or a start-up error. Only the schema's own requirement may appear, never input.
 */
export function ruleOf(issue: v.BaseIssue<unknown>): string {
  const n = typeof issue.requirement === "number" || typeof issue.requirement === "bigint";
  const req = n ? String(issue.requirement) : "";
  const items = Array.isArray(issue.input) ? "entries" : "characters";
  switch (issue.type) {
    case "string":
      return "must be a string";
    case "number":
      return "must be a number";
    case "boolean":
      return "must be a boolean";
    case "bigint":
      return "must be an integer";
    case "array":
      return "must be an array";
    case "object":
    case "strict_object":
    case "loose_object":
    case "record":
      return "must be a JSON object";
    case "literal":
    case "picklist":
    case "enum":
      return `must be one of: ${optionsOf(issue.expected)}`;
    case "null":
      return "must be null";
    case "min_length":
    case "non_empty":
      return req && req !== "1" ? `must have at least ${req} ${items}` : "must not be empty";
    case "max_length":
      return `must have at most ${req} ${items}`;
    case "length":
      return `must have exactly ${req} ${items}`;
    case "min_value":
      return `must be at least ${req}`;
    case "max_value":
      return `must be at most ${req}`;
    case "integer":
      return "must be an integer";
    case "finite":
      return "must be a finite number";
    case "iso_timestamp":
    case "iso_date_time":
      return "must be an ISO 8601 date-time";
    case "regex":
      return "has the wrong format";
    case "url":
      return "must be a URL";
    case "union":
    case "variant":
      return "has the wrong type or shape";
    default:
      return "is not valid";
  }
}

/** `"a" | "b"` (valibot's `expected` for a picklist, built from the schema's options) → `a, b`. */
function optionsOf(expected: string | null): string {
  if (!expected) return "the allowed values";
  return expected
    .split(" | ")
    .map((o) => o.replace(/^"(.*)"$/, "$1"))
    .join(", ");
}
