import type { Db, McpToolRow, Query } from "@gw/db";
import { mcpToolLists, mcpTools } from "@gw/db";
import { and, asc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import type { LearnedTool } from "./answer.ts";

/** A row the page upsert changed: inserted (old_digest null), changed, or seen again. */
export type Written = { name: string; digest: string; pinnedDigest: string | null; oldDigest: string | null };

/** What the hot path needs of a tool: its current digest, its pin, and whether it is listed. */
export type ToolFacts = { digest: string; pinnedDigest: string | null; present: boolean };

/** A tool as search shows it: its name and definition. */
export type ShownTool = { name: string; definition: Record<string, unknown> };

/** How often an unchanged sighting refreshes `last_seen_at` (and a complete list `refreshed_at`). */
export const SEEN_RESOLUTION_SECONDS = 60;

/** The catalog's SQL. Every function takes the tenant id: there is no unscoped read or write. */
export const toolsRepo = {
  /**
   * Learns one page in one statement. An unchanged tool is written only when its last sighting is
   * older than SEEN_RESOLUTION_SECONDS; the returned rows carry the digest before the write, so a
   * drift is reported by the one writer that changed the row (a concurrent second writer finds the
   * digest already equal and writes nothing).
   */
  async upsertPage(
    query: Query,
    tenantId: string,
    agentId: string,
    tools: LearnedTool[],
  ): Promise<Written[]> {
    if (tools.length === 0) return [];
    const rows = await query(
      `with incoming as (
         select * from jsonb_to_recordset($3::jsonb) as i(name text, digest text, definition jsonb)
       ), old as (
         select t.name, t.digest from mcp_tools t
         where t.tenant_id = $1 and t.agent_id = $2 and t.name in (select name from incoming)
       )
       insert into mcp_tools as t (tenant_id, agent_id, name, digest, definition)
       select $1, $2, i.name, i.digest, i.definition from incoming i
       on conflict (tenant_id, agent_id, name) do update set
         digest = excluded.digest,
         definition = excluded.definition,
         changed_at = case when t.digest = excluded.digest then t.changed_at else now() end,
         last_seen_at = now(),
         present = true
       where t.digest <> excluded.digest or not t.present
         or t.last_seen_at < now() - make_interval(secs => $4)
       returning t.name, t.digest, t.pinned_digest, (select o.digest from old o where o.name = t.name) as old_digest`,
      [tenantId, agentId, JSON.stringify(tools), SEEN_RESOLUTION_SECONDS],
    );
    return rows.map((r) => ({
      name: String(r.name),
      digest: String(r.digest),
      pinnedDigest: r.pinned_digest == null ? null : String(r.pinned_digest),
      oldDigest: r.old_digest == null ? null : String(r.old_digest),
    }));
  },

  /**
   * A complete list was seen: tools in it are present, the others absent (a pinned absent tool is
   * `removed`). Returns how many rows changed; `refreshed_at` moves when older than the resolution
   * (always when `force`, a refresh an operator asked for).
   */
  async markComplete(
    query: Query,
    tenantId: string,
    agentId: string,
    names: readonly string[],
    force: boolean,
  ): Promise<number> {
    const changed = await query(
      `update mcp_tools set present = (name in (select jsonb_array_elements_text($3::jsonb)))
       where tenant_id = $1 and agent_id = $2
         and present <> (name in (select jsonb_array_elements_text($3::jsonb)))
       returning name`,
      [tenantId, agentId, JSON.stringify(names)],
    );
    await query(
      `insert into mcp_tool_lists as l (tenant_id, agent_id) values ($1, $2)
       on conflict (tenant_id, agent_id) do update set refreshed_at = now()
       where $3 or l.refreshed_at < now() - make_interval(secs => $4)`,
      [tenantId, agentId, force, SEEN_RESOLUTION_SECONDS],
    );
    return changed.length;
  },

  /** Digest, pin and presence of every tool of one agent (the hot path's cached view). */
  async facts(query: Query, tenantId: string, agentId: string): Promise<Map<string, ToolFacts>> {
    const rows = await query(
      "select name, digest, pinned_digest, present from mcp_tools where tenant_id = $1 and agent_id = $2",
      [tenantId, agentId],
    );
    const out = new Map<string, ToolFacts>();
    for (const r of rows) {
      out.set(String(r.name), {
        digest: String(r.digest),
        pinnedDigest: r.pinned_digest == null ? null : String(r.pinned_digest),
        present: r.present === true,
      });
    }
    return out;
  },

  /**
   * Every present tool of one agent with the definition a search shows: the pinned one when the
   * tool is pinned (what an operator approved), else the last seen (docs/mcp.md, Tool search).
   */
  async definitions(query: Query, tenantId: string, agentId: string): Promise<ShownTool[]> {
    const rows = await query(
      `select name, coalesce(pinned_definition, definition) as definition from mcp_tools
       where tenant_id = $1 and agent_id = $2 and present order by name`,
      [tenantId, agentId],
    );
    return rows.map((r) => ({
      name: String(r.name),
      definition: (typeof r.definition === "string" ? JSON.parse(r.definition) : r.definition) as Record<
        string,
        unknown
      >,
    }));
  },

  async list(
    db: Db,
    tenantId: string,
    agentId: string,
  ): Promise<{ rows: McpToolRow[]; refreshedAt: Date | null }> {
    const [rows, lists] = await Promise.all([
      db
        .select()
        .from(mcpTools)
        .where(and(eq(mcpTools.tenantId, tenantId), eq(mcpTools.agentId, agentId)))
        .orderBy(asc(mcpTools.name)),
      db
        .select({ at: mcpToolLists.refreshedAt })
        .from(mcpToolLists)
        .where(and(eq(mcpToolLists.tenantId, tenantId), eq(mcpToolLists.agentId, agentId))),
    ]);
    return { rows, refreshedAt: lists[0]?.at ?? null };
  },

  async get(db: Db, tenantId: string, agentId: string, name: string): Promise<McpToolRow | undefined> {
    const [row] = await db
      .select()
      .from(mcpTools)
      .where(and(eq(mcpTools.tenantId, tenantId), eq(mcpTools.agentId, agentId), eq(mcpTools.name, name)))
      .limit(1);
    return row;
  },

  /** Names of the agent's tools among `names` (all when null). */
  async known(db: Db, tenantId: string, agentId: string, names: readonly string[] | null): Promise<string[]> {
    const rows = await db
      .select({ name: mcpTools.name })
      .from(mcpTools)
      .where(scope(tenantId, agentId, names));
    return rows.map((r) => r.name);
  },

  /** Pins the current definition of the named tools (all when null); returns the names pinned. */
  async pin(db: Db, tenantId: string, agentId: string, names: readonly string[] | null): Promise<string[]> {
    const rows = await db
      .update(mcpTools)
      .set({
        pinnedDigest: sql`${mcpTools.digest}`,
        pinnedDefinition: sql`${mcpTools.definition}`,
        pinnedAt: sql`now()`,
      })
      .where(scope(tenantId, agentId, names))
      .returning({ name: mcpTools.name });
    return rows.map((r) => r.name).sort();
  },

  /** Clears the pins of the named tools (all when null); returns the names unpinned. */
  async unpin(db: Db, tenantId: string, agentId: string, names: readonly string[] | null): Promise<string[]> {
    const rows = await db
      .update(mcpTools)
      .set({ pinnedDigest: null, pinnedDefinition: null, pinnedAt: null })
      .where(and(scope(tenantId, agentId, names), isNotNull(mcpTools.pinnedDigest)))
      .returning({ name: mcpTools.name });
    return rows.map((r) => r.name).sort();
  },
};

function scope(tenantId: string, agentId: string, names: readonly string[] | null) {
  return and(
    eq(mcpTools.tenantId, tenantId),
    eq(mcpTools.agentId, agentId),
    names === null ? undefined : inArray(mcpTools.name, [...names]),
  );
}
