import { createHash } from "node:crypto";
import type { AgentsCtx } from "@gw/agents";
import type { McpToolRow } from "@gw/db";
import { LIMIT_DEFAULT, LIMIT_MAX, QUERY_MAX_CHARS } from "@gw/virtual";
import * as v from "valibot";
import { toolsRepo } from "./repo.ts";
import { buildToolIndex, type ToolIndex } from "./search-index.ts";
import { statusOf, TOOL_STATUSES } from "./status.ts";
import { mcpAgent } from "./tools.ts";

/** POST /v1/agents/{id}/tools/search: what `search_tools` would rank for a query. */
export const TrySearchInput = v.strictObject({
  query: v.pipe(
    v.string("must be a string"),
    v.check((q) => q.trim().length > 0, "must not be empty"),
    v.maxLength(QUERY_MAX_CHARS, `must be at most ${QUERY_MAX_CHARS} characters`),
  ),
  limit: v.optional(
    v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(LIMIT_MAX, `must be at most ${LIMIT_MAX}`),
    ),
  ),
});

export const TrySearchResult = v.object({
  data: v.array(
    v.object({
      name: v.string(),
      status: v.picklist(TOOL_STATUSES),
      description: v.nullable(v.string()),
      input_schema: v.nullable(v.unknown()),
    }),
  ),
});

/** Indexes of the catalogs operators tried a search on, by catalog version (a few per process). */
const tried = new Map<string, { version: string; index: ToolIndex }>();
const MAX_TRIED = 64;

/**
 * The catalog's tools best matching a query, best first (docs/tools.md, Try a search): the index
 * `search_tools` ranks with, over the present tools with their pinned definitions where pinned,
 * and each tool's status. For an operator: no caller's policy filters it (a tool a rule denies
 * to a caller, or a `tool_status` rule hides, is shown with its status).
 */
export async function trySearch({
  ctx,
  agentId,
  query,
  limit,
}: {
  ctx: AgentsCtx;
  agentId: string;
  query: string;
  limit?: number | undefined;
}) {
  await mcpAgent({ ctx, agentId });
  const { rows } = await toolsRepo.list(ctx.db, ctx.tenantId, agentId);
  const present = rows.filter((r) => r.present);
  const hash = createHash("sha256");
  for (const r of present) hash.update(`${r.name}\t${r.digest}\t${r.pinnedDigest ?? ""}\n`);
  const version = hash.digest("base64");
  const key = `${ctx.tenantId}\n${agentId}`;
  let hit = tried.get(key);
  if (!hit || hit.version !== version) {
    const index = buildToolIndex(
      present.map((r) => ({ name: r.name, definition: r.pinnedDefinition ?? r.definition })),
    );
    if (tried.size >= MAX_TRIED) tried.clear();
    hit = { version, index };
    tried.set(key, hit);
  }
  const byName = new Map<string, McpToolRow>(present.map((r) => [r.name, r]));
  return {
    data: hit.index.search(query, limit ?? LIMIT_DEFAULT).map((t) => {
      const row = byName.get(t.name) as McpToolRow;
      const d = t.definition;
      return {
        name: t.name,
        status: statusOf({ digest: row.digest, pinnedDigest: row.pinnedDigest, present: row.present }),
        description: typeof d.description === "string" ? d.description : null,
        input_schema: d.inputSchema ?? null,
      };
    }),
  };
}
