import { createHash } from "node:crypto";
import { canonicalJson } from "@gw/core";

/** A tool object as the server sent it, without `_meta` (what its digest covers). */
export type ToolDefinition = Record<string, unknown>;

/** The tool object without `_meta`: servers put per-response data there, not the definition. */
export function definitionOf(tool: Record<string, unknown>): ToolDefinition {
  if (!("_meta" in tool)) return tool;
  const { _meta: _, ...rest } = tool;
  return rest;
}

/**
 * `sha256:<hex>` of the RFC 8785 canonical JSON of the definition: two spellings of one tool (key
 * order, number forms, escapes) have one digest, and any change to what a client reads has another.
 * Throws on values canonical JSON refuses (a lone surrogate); callers skip such a tool.
 */
export function toolDigest(definition: ToolDefinition): string {
  return `sha256:${createHash("sha256").update(canonicalJson(definition)).digest("hex")}`;
}
