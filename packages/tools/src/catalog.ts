import { createHash } from "node:crypto";
import { withinDeadline } from "@gw/core";
import type { Query } from "@gw/db";
import { type Logger, recordToolDrift } from "@gw/telemetry";
import { type ToolPage, toolPageOf } from "./answer.ts";
import { SEEN_RESOLUTION_SECONDS, type ShownTool, type ToolFacts, toolsRepo } from "./repo.ts";
import { Walks } from "./walks.ts";

/** A change announcement as the runtime's change bus carries it (kind "tools", id = agent). */
type ToolsChange = { kind: string; tenantId: string; id?: string };

export type CatalogDeps = {
  query: Query;
  logger: Logger;
  /** Cached views live this long; a write on any replica invalidates them at once (below). */
  cacheMs: number;
  publish: (change: { kind: "tools"; tenantId: string; id: string }) => Promise<void>;
  subscribe: (fn: (change: ToolsChange) => void) => () => void;
};

/** What a learning call names: the agent, and the cursor of the request the page answered. */
export type PageRef = { tenantId: string; agentId: string; cursor: string | null };

export type ToolCatalog = {
  /**
   * Learns a page off the critical path: queued and written in order, never awaited by a relayed
   * answer. The promise resolves once it is written or its failure logged; it never rejects
   * (refresh awaits it; shutdown drains).
   */
  learn: (ref: PageRef, page: ToolPage, opts?: { refresh?: boolean }) => Promise<void>;
  /**
   * Learns the text of a JSON-RPC response to tools/list as it passed through the proxy. A page
   * whose exact text this process learned within the last minute is not parsed, digested or
   * written again (only its place in a cursor walk is noted): the usual answer, an unchanged list,
   * costs one hash.
   */
  learnText: (ref: PageRef, json: string) => void;
  /** The agent's tools (digest, pin, presence), cached; empty when none was ever seen. */
  view: (tenantId: string, agentId: string) => Promise<ReadonlyMap<string, ToolFacts>>;
  /** The agent's present tools with the definitions search shows (read when its index is built). */
  definitions: (tenantId: string, agentId: string) => Promise<ShownTool[]>;
  /** Tells every replica an agent's pins changed (the pin routes call it). */
  changed: (tenantId: string, agentId: string) => Promise<void>;
  /** Waits for queued learning (graceful shutdown). */
  drain: () => Promise<void>;
  close: () => void;
};

/** Pages waiting to be written hold their parsed tools: bounded, the overflow is not learned. */
const MAX_QUEUED = 256;
const MAX_VIEWS = 10_000;

/**
 * The tool catalog of one process: learning (a serial write queue, cheap when nothing changed:
 * tools whose digest this process wrote within the resolution are not written again) and the
 * cached per-agent views the policy and the list filter read. Pins and learned changes reach every
 * replica through the change bus.
 */
export function createToolCatalog(deps: CatalogDeps): ToolCatalog {
  const walks = new Walks();
  const views = new Map<string, { expires: number; view: Promise<ReadonlyMap<string, ToolFacts>> }>();
  /** What this process last wrote per agent: name → digest and when, to skip unchanged pages. */
  const written = new Map<string, Map<string, { digest: string; at: number }>>();
  /** The last text learned per agent and cursor, with what the walk needs of it. */
  const lastPages = new Map<
    string,
    { hash: string; names: string[]; nextCursor: string | null; at: number }
  >();
  let tail: Promise<void> = Promise.resolve();
  let queued = 0;

  const key = (tenantId: string, agentId: string) => `${tenantId}\n${agentId}`;
  const invalidate = (tenantId: string, agentId: string) => {
    views.delete(key(tenantId, agentId));
    written.delete(key(tenantId, agentId));
    // A pin changed or another replica learned something: the next page is looked at again.
    for (const k of lastPages.keys()) if (k.startsWith(`${key(tenantId, agentId)}\n`)) lastPages.delete(k);
  };
  const unsubscribe = deps.subscribe((change) => {
    if (change.kind === "tools" && change.id) invalidate(change.tenantId, change.id);
  });

  const write = async (ref: PageRef, page: ToolPage, complete: Set<string> | null, refresh: boolean) => {
    const k = key(ref.tenantId, ref.agentId);
    const mine = written.get(k) ?? new Map<string, { digest: string; at: number }>();
    const now = Date.now();
    const fresh = page.tools.filter((t) => {
      const w = mine.get(t.name);
      return refresh || !w || w.digest !== t.digest || now - w.at > 60_000;
    });
    const rows = await toolsRepo.upsertPage(deps.query, ref.tenantId, ref.agentId, fresh);
    let changed = rows.some((r) => r.oldDigest !== r.digest);
    for (const t of fresh) mine.set(t.name, { digest: t.digest, at: now });
    if (written.size >= MAX_VIEWS && !written.has(k)) written.clear();
    written.set(k, mine);
    if (complete) {
      const moved = await toolsRepo.markComplete(
        deps.query,
        ref.tenantId,
        ref.agentId,
        [...complete],
        refresh,
      );
      changed ||= moved > 0;
    }
    for (const r of rows) {
      // The first time a drift is seen: the writer that changed the row away from its old digest.
      if (
        r.pinnedDigest !== null &&
        r.oldDigest !== null &&
        r.oldDigest !== r.digest &&
        r.digest !== r.pinnedDigest
      ) {
        recordToolDrift({ tenantId: ref.tenantId });
        deps.logger.warn(
          { agent_id: ref.agentId, tool: r.name, pinned_digest: r.pinnedDigest, digest: r.digest },
          "mcp tool definition drifted from its pin",
        );
      }
    }
    if (changed) await deps.publish({ kind: "tools", tenantId: ref.tenantId, id: ref.agentId });
  };

  const catalog: ToolCatalog = {
    learnText(ref, json) {
      const scope = key(ref.tenantId, ref.agentId);
      const k = `${scope}\n${ref.cursor ?? ""}`;
      const hash = createHash("sha256").update(json).digest("base64");
      const last = lastPages.get(k);
      if (last && last.hash === hash && Date.now() - last.at < SEEN_RESOLUTION_SECONDS * 1000) {
        walks.step(scope, ref.cursor, last.names, last.nextCursor);
        return;
      }
      const page = toolPageOf(json);
      if (!page) return;
      if (lastPages.size >= MAX_VIEWS) lastPages.clear();
      const names = page.tools.map((t) => t.name);
      lastPages.set(k, { hash, names, nextCursor: page.nextCursor, at: Date.now() });
      void catalog.learn(ref, page);
    },
    learn(ref, page, opts = {}) {
      const complete = walks.step(
        key(ref.tenantId, ref.agentId),
        ref.cursor,
        page.tools.map((t) => t.name),
        page.nextCursor,
      );
      if (queued >= MAX_QUEUED) {
        deps.logger.warn(
          { agent_id: ref.agentId },
          "tool catalog queue full: a tools/list page was not learned",
        );
        return Promise.resolve();
      }
      queued++;
      const run = tail
        .then(() => write(ref, page, complete, opts.refresh === true))
        .catch((e: unknown) => {
          deps.logger.warn(
            { agent_id: ref.agentId, err: e instanceof Error ? e.name : "error" },
            "could not learn a tools/list page",
          );
        })
        .finally(() => {
          queued--;
        });
      tail = run;
      return run;
    },
    view(tenantId, agentId) {
      const k = key(tenantId, agentId);
      const hit = views.get(k);
      if (hit && hit.expires > Date.now()) return hit.view;
      // Bounded: with the store down a tools/call under a tool_status rule gets 503 in time.
      const view = withinDeadline(toolsRepo.facts(deps.query, tenantId, agentId));
      if (views.size >= MAX_VIEWS) views.clear();
      views.set(k, { expires: Date.now() + deps.cacheMs, view });
      // A failed read is not cached: the next call tries again.
      view.catch(() => {
        if (views.get(k)?.view === view) views.delete(k);
      });
      return view;
    },
    definitions: (tenantId, agentId) => withinDeadline(toolsRepo.definitions(deps.query, tenantId, agentId)),
    async changed(tenantId, agentId) {
      invalidate(tenantId, agentId);
      await deps.publish({ kind: "tools", tenantId, id: agentId });
    },
    drain: async () => {
      let seen: Promise<void> | undefined;
      while (seen !== tail) {
        seen = tail;
        await tail;
      }
    },
    close: () => {
      unsubscribe();
    },
  };
  return catalog;
}
