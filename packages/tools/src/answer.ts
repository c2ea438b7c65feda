import { LIMITS } from "@gw/core";
import { isRecord, parseJson, resultObject } from "@gw/jsonrpc";
import { definitionOf, type ToolDefinition, toolDigest } from "./digest.ts";

/** Bound of a tools/list answer the gateway reads (learning, filtering, refresh). */
export const TOOL_LIST_MAX_BYTES = LIMITS.toolListMaxBytes;
/** MCP names a tool in at most 128 characters; the catalog keeps a little more, never unbounded. */
export const TOOL_NAME_MAX_BYTES = LIMITS.toolNameMaxBytes;

/** One learnable tool of a page: a storable name, its digest and definition. */
export type LearnedTool = { name: string; digest: string; definition: ToolDefinition };

/**
 * One `tools/list` result as the catalog reads it. `tools` holds the learnable entries (first of
 * duplicate names; entries without a string name, or that Postgres could not store, skipped);
 * `nextCursor` is the page's cursor (null: last page).
 */
export type ToolPage = { tools: LearnedTool[]; nextCursor: string | null };

/**
 * Reads the `result` of a JSON-RPC response to tools/list. Null when it is not one (not JSON, an
 * error response, no `tools` array): nothing is learned from it.
 */
export function toolPageOf(json: string): ToolPage | null {
  const result = resultOf(json);
  if (!result || !Array.isArray(result.tools)) return null;
  const seen = new Set<string>();
  const tools: LearnedTool[] = [];
  for (const tool of result.tools) {
    if (!isRecord(tool) || !storableName(tool.name) || seen.has(tool.name)) continue;
    seen.add(tool.name);
    const definition = definitionOf(tool);
    const digest = digestOrNull(definition);
    if (digest) tools.push({ name: tool.name, digest, definition });
  }
  const cursor = result.nextCursor;
  return { tools, nextCursor: typeof cursor === "string" && cursor !== "" ? cursor : null };
}

/** The `result` object of a JSON-RPC success response, or null. */
export function resultOf(json: string): Record<string, unknown> | null {
  return resultObject(parseJson(json));
}

function digestOrNull(definition: ToolDefinition): string | null {
  // jsonb holds no U+0000; canonical JSON refuses lone surrogates: such a tool stays unknown.
  try {
    const digest = toolDigest(definition);
    return JSON.stringify(definition).includes("\\u0000") ? null : digest;
  } catch {
    return null;
  }
}

const LONE_SURROGATE = /\p{Surrogate}/u;

/** A name the catalog can key and Postgres can store. */
export function storableName(name: unknown): name is string {
  return (
    typeof name === "string" &&
    name !== "" &&
    Buffer.byteLength(name) <= TOOL_NAME_MAX_BYTES &&
    !name.includes("\u0000") &&
    !LONE_SURROGATE.test(name)
  );
}
