import type { McpToolRow } from "@gw/db";
import * as v from "valibot";
import { statusOf, TOOL_STATUSES } from "./status.ts";

const Time = v.nullable(v.pipe(v.string(), v.isoTimestamp()));
const Json = v.nullable(v.unknown());

/** One tool of an MCP agent's catalog (GET /v1/agents/{id}/tools); absent values are null. */
export const ToolResource = v.object({
  name: v.string(),
  status: v.picklist(TOOL_STATUSES),
  digest: v.pipe(
    v.string(),
    v.description("sha256:<hex> of the RFC 8785 canonical JSON of the tool, _meta removed"),
  ),
  pinned_digest: v.nullable(v.string()),
  title: v.nullable(v.string()),
  description: v.nullable(v.string()),
  input_schema: Json,
  output_schema: Json,
  annotations: Json,
  first_seen_at: Time,
  last_seen_at: Time,
  pinned_at: Time,
  changed_at: Time,
});
export const ToolList = v.object({ data: v.array(ToolResource), refreshed_at: Time });
/** GET /v1/agents/{id}/tools/{name}: the current definition and the pinned one, for a diff. */
export const ToolDetail = v.object({
  ...ToolResource.entries,
  definition: v.record(v.string(), v.unknown()),
  pinned: v.nullable(v.record(v.string(), v.unknown())),
});
export const PinResult = v.object({ pinned: v.array(v.string()) });
export const UnpinResult = v.object({ unpinned: v.array(v.string()) });
export const RefreshResult = v.object({
  ...ToolList.entries,
  complete: v.pipe(v.boolean(), v.description("The server's whole list was read (every page)")),
});

/** The body of pin and unpin: the tools named, or every catalogued tool when absent. */
export const PinInput = v.strictObject({
  tools: v.optional(
    v.pipe(
      v.array(
        v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(256)),
        "must be an array of tool names",
      ),
      v.minLength(1, "must not be empty (leave it out for every tool)"),
      v.maxLength(1_000, "must have at most 1000 names"),
    ),
  ),
});

export type ToolJson = v.InferOutput<typeof ToolResource>;

export function toolJson(row: McpToolRow): ToolJson {
  const d = row.definition;
  return {
    name: row.name,
    status: statusOf(row),
    digest: row.digest,
    pinned_digest: row.pinnedDigest,
    title: typeof d.title === "string" ? d.title : null,
    description: typeof d.description === "string" ? d.description : null,
    input_schema: d.inputSchema ?? null,
    output_schema: d.outputSchema ?? null,
    annotations: d.annotations ?? null,
    first_seen_at: row.firstSeenAt.toISOString(),
    last_seen_at: row.lastSeenAt.toISOString(),
    pinned_at: row.pinnedAt?.toISOString() ?? null,
    changed_at: row.changedAt.toISOString(),
  };
}

export function toolDetailJson(row: McpToolRow): v.InferOutput<typeof ToolDetail> {
  return { ...toolJson(row), definition: row.definition, pinned: row.pinnedDefinition };
}
