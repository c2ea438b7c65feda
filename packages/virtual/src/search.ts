import { isRecord } from "@gw/jsonrpc";
import { ERRORS, type Json, type JsonRpcId, type OwnAnswer, rpcError } from "./protocol.ts";

/** The gateway's own tools on a search-mode virtual server (docs/mcp.md, Tool search on virtual servers). */
export const SEARCH_TOOL = "search_tools";
export const CALL_TOOL = "call_tool";
export const QUERY_MAX_CHARS = 512;
export const LIMIT_MAX = 50;
export const LIMIT_DEFAULT = 10;

/** Their definitions, as `tools/list` answers them (fixed: their digest never changes). */
export const SEARCH_MODE_TOOLS: readonly Json[] = [
  {
    name: SEARCH_TOOL,
    title: "Search tools",
    description:
      "Search this server's tools by what you want to do, in plain words. Answers the best matching tools, best first, each with its name, description and input schema. Call one with call_tool.",
    inputSchema: {
      type: "object",
      properties: {
        query: {
          type: "string",
          minLength: 1,
          maxLength: QUERY_MAX_CHARS,
          description: "What you want to do, e.g. 'open a pull request' or 'weather forecast for a city'",
        },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: LIMIT_MAX,
          default: LIMIT_DEFAULT,
          description: "How many tools to answer at most",
        },
      },
      required: ["query"],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: "Call a tool",
    description:
      "Call one of this server's tools by the name search_tools answered, with its arguments. Answers that tool's result.",
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", minLength: 1, description: "The tool's name, as search_tools answered it" },
        arguments: {
          type: "object",
          description: "The tool's arguments, as its input schema describes them",
        },
      },
      required: ["name"],
      additionalProperties: false,
    },
  },
];

/** A search as the caller asked it. */
export type SearchArgs = { query: string; limit: number };

/** `search_tools` arguments, or the revision's invalid-params error naming what is wrong. */
export function searchArgs(id: JsonRpcId, params: Json): SearchArgs | OwnAnswer {
  const args = params.arguments === undefined ? {} : params.arguments;
  if (!isRecord(args)) return invalid(id, "arguments must be an object");
  for (const key of Object.keys(args)) {
    if (key !== "query" && key !== "limit") return invalid(id, `unknown argument ${short(key)}`);
  }
  const { query, limit } = args;
  if (typeof query !== "string") return invalid(id, "query must be a string");
  if (query.trim().length === 0) return invalid(id, "query must not be empty");
  if (query.length > QUERY_MAX_CHARS)
    return invalid(id, `query must be at most ${QUERY_MAX_CHARS} characters`);
  if (limit === undefined) return { query, limit: LIMIT_DEFAULT };
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX) {
    return invalid(id, `limit must be an integer from 1 to ${LIMIT_MAX}`);
  }
  return { query, limit };
}

/**
 * A `call_tool` request as the `tools/call` of the tool it names, with that tool's arguments and
 * the caller's `_meta` (so everything after step 5 sees one `tools/call`: policy, approvals,
 * quotas, prices, receipts, guardrails, the record). Null when its arguments are not a
 * `{name, arguments?}` naming another tool than the gateway's own two: the virtual server then
 * answers it with the invalid-params error (`callToolRefusal`).
 */
export function unwrapCallTool(msg: Json): Json | null {
  const params = isRecord(msg.params) ? msg.params : null;
  if (!params || params.name !== CALL_TOOL) return null;
  const args = params.arguments;
  if (!isRecord(args) || typeof args.name !== "string" || args.name.length === 0) return null;
  if (args.name === CALL_TOOL || args.name === SEARCH_TOOL) return null;
  if (Object.keys(args).some((k) => k !== "name" && k !== "arguments")) return null;
  if (args.arguments !== undefined && !isRecord(args.arguments)) return null;
  const inner: Json = { name: args.name };
  if (args.arguments !== undefined) inner.arguments = args.arguments;
  if (params._meta !== undefined) inner._meta = params._meta;
  return { ...msg, params: inner };
}

/** Why a `call_tool` request was not unwrapped: the revision's invalid-params error. */
export function callToolRefusal(id: JsonRpcId, params: Json): OwnAnswer {
  const args = params.arguments;
  if (!isRecord(args)) return invalid(id, "arguments must be an object");
  for (const key of Object.keys(args)) {
    if (key !== "name" && key !== "arguments") return invalid(id, `unknown argument ${short(key)}`);
  }
  if (typeof args.name !== "string" || args.name.length === 0) return invalid(id, "name must be a tool name");
  if (args.arguments !== undefined && !isRecord(args.arguments)) {
    return invalid(id, "arguments.arguments must be an object");
  }
  return invalid(id, `${args.name} is not called through call_tool: call it directly`);
}

/** The answer of `search_tools`: the tools as structured content and the same JSON as text. */
export function searchResult(id: JsonRpcId, tools: readonly Json[]): OwnAnswer {
  const structuredContent = { tools };
  return {
    status: 200,
    message: {
      jsonrpc: "2.0",
      id,
      result: {
        content: [{ type: "text", text: JSON.stringify(structuredContent) }],
        structuredContent,
      },
    },
  };
}

function invalid(id: JsonRpcId, why: string): OwnAnswer {
  return rpcError(200, id, ERRORS.invalidParams, `Invalid params: ${why}`);
}

function short(s: string): string {
  return s.length <= 64 ? s : `${s.slice(0, 64)}…`;
}
