import { createHash } from "node:crypto";
import type { ForwardCall, ListPage, ToolSearch } from "@gw/forward";
import { type CompiledPolicy, type ListFacts, listCallerKey, toolListed } from "@gw/policy";
import {
  CALL_TOOL,
  type Json,
  type Member,
  SEARCH_MODE_TOOLS,
  SEARCH_TOOL,
  type VirtualServer,
} from "@gw/virtual";
import { toolPageOf } from "./answer.ts";
import type { ToolCatalog } from "./catalog.ts";
import { toolDigest } from "./digest.ts";
import type { ToolFacts } from "./repo.ts";
import { buildToolIndex, type ToolIndex } from "./search-index.ts";
import { statusOf } from "./status.ts";

/** A listing on the gateway's behalf is renewed (in the background) when older than this. */
const RELIST_MS = 5 * 60_000;
/** Members still never learned are listed again (awaited) at most this often. */
const RETRY_UNLEARNED_MS = 60_000;
/** A listing reads at most this many pages of the merged list. */
const MAX_PAGES = 100;
/** Indexes kept per process (one per virtual agent searched). */
const MAX_INDEXES = 1_000;

type View = ReadonlyMap<string, ToolFacts>;

/**
 * Tool search of search-mode virtual servers (docs/mcp.md, Tool search on virtual servers), over
 * the virtual agent's tool catalog (exposed names). Each agent's index is built once per catalog
 * version (the names, digests, pins and presence of its tools) and reused by every search until
 * that changes; a search then costs the index lookup and the caller's filter on the hits.
 * Members whose tools were never learned are listed first on the gateway's behalf (awaited); a
 * listing older than RELIST_MS is renewed in the background, since a search-mode server's
 * callers never list the members themselves.
 */
export function toolSearchOf(deps: {
  catalog: ToolCatalog;
  policyOf: (tenantId: string) => Promise<CompiledPolicy | null>;
}): ToolSearch {
  const { catalog } = deps;
  const indexes = new Map<string, { version: string; index: Promise<ToolIndex> }>();
  const versions = new WeakMap<View, { version: string; heads: Map<string, number> }>();
  const listings = new Map<string, { at: number; running: Promise<void> | null }>();

  /** The catalog version of a view, and how many of its names fall under each prefix. */
  const versionOf = (view: View) => {
    let v = versions.get(view);
    if (v) return v;
    const names = [...view.keys()].sort();
    const hash = createHash("sha256");
    const heads = new Map<string, number>();
    for (const name of names) {
      const f = view.get(name) as ToolFacts;
      hash.update(`${name}\t${f.digest}\t${f.pinnedDigest ?? ""}\t${f.present ? 1 : 0}\n`);
      const at = name.indexOf("__");
      const head = at > 0 ? name.slice(0, at) : "";
      heads.set(head, (heads.get(head) ?? 0) + 1);
    }
    v = { version: hash.digest("base64"), heads };
    versions.set(view, v);
    return v;
  };

  const listAll = (key: string, call: ForwardCall, listPage: ListPage): Promise<void> => {
    const state = listings.get(key);
    if (state?.running) return state.running;
    const running = walk(call, listPage)
      .catch(() => {})
      .finally(() => {
        listings.set(key, { at: Date.now(), running: null });
      });
    if (listings.size >= MAX_INDEXES && !listings.has(key)) listings.clear();
    listings.set(key, { at: state?.at ?? 0, running });
    return running;
  };

  const walk = async (call: ForwardCall, listPage: ListPage) => {
    const ref = { tenantId: call.tenantId, agentId: call.agentId };
    let cursor: string | null = null;
    const seen = new Set<string>();
    for (let i = 0; i < MAX_PAGES; i++) {
      const json = await listPage(cursor);
      const page = json === null ? null : toolPageOf(json);
      if (!page) break;
      await catalog.learn({ ...ref, cursor }, page);
      if (page.nextCursor === null || seen.has(page.nextCursor)) break;
      seen.add(page.nextCursor);
      cursor = page.nextCursor;
    }
    // This replica's views are read again at once (learning tells the others).
    await catalog.changed(call.tenantId, call.agentId);
  };

  const indexOf = (tenantId: string, agentId: string, version: string): Promise<ToolIndex> => {
    const key = `${tenantId}\n${agentId}`;
    const hit = indexes.get(key);
    if (hit && hit.version === version) return hit.index;
    const index = catalog.definitions(tenantId, agentId).then(buildToolIndex);
    if (indexes.size >= MAX_INDEXES && !indexes.has(key)) indexes.clear();
    indexes.set(key, { version, index });
    // A failed read is not kept: the next search tries again.
    index.catch(() => {
      if (indexes.get(key)?.index === index) indexes.delete(key);
    });
    return index;
  };

  return {
    async ownTools(call) {
      const policy = await deps.policyOf(call.tenantId);
      const names = SEARCH_MODE_TOOLS.map((t) => t.name as string);
      if (!policy) return new Set(names);
      const facts = factsOf(policy, call);
      return new Set(names.filter((n) => toolListed(policy, facts, n, "pinned")));
    },

    async search(call, server, args, listPage) {
      const key = `${call.tenantId}\n${call.agentId}`;
      let view = await catalog.view(call.tenantId, call.agentId);
      const state = listings.get(key);
      const now = Date.now();
      if (unlearned(server, versionOf(view).heads) && (!state || now - state.at > RETRY_UNLEARNED_MS)) {
        await listAll(key, call, listPage);
        view = await catalog.view(call.tenantId, call.agentId);
      } else if (!state) {
        listings.set(key, { at: now, running: null });
      } else if (now - state.at > RELIST_MS) {
        void listAll(key, call, listPage);
      }
      const [index, policy] = await Promise.all([
        indexOf(call.tenantId, call.agentId, versionOf(view).version),
        deps.policyOf(call.tenantId),
      ]);
      const facts = policy ? factsOf(policy, call) : null;
      const keep = (name: string) => {
        const f = view.get(name);
        if (!f?.present) return false;
        return policy === null || toolListed(policy, facts as ListFacts, name, statusOf(f));
      };
      return index.search(args.query, args.limit, keep).map((t) => shown(t.name, t.definition));
    },
  };
}

/** Whether some member has no tool in the catalog (never learned, or it has none). */
function unlearned(server: VirtualServer, heads: ReadonlyMap<string, number>): boolean {
  let prefixed = 0;
  let bare: Member | null = null;
  for (const m of server.members) {
    if (m.prefix === "") {
      bare = m;
      continue;
    }
    const n = heads.get(m.prefix) ?? 0;
    if (n === 0) return true;
    prefixed += n;
  }
  if (!bare) return false;
  let total = 0;
  for (const n of heads.values()) total += n;
  return total - prefixed === 0;
}

function factsOf(policy: CompiledPolicy, call: ForwardCall): ListFacts {
  const facts = { tenantId: call.tenantId, agentId: call.agentId, caller: call.caller };
  return { ...facts, callerKey: listCallerKey(policy, facts) };
}

/** A found tool as `search_tools` answers it. */
function shown(name: string, definition: Readonly<Record<string, unknown>>): Json {
  const out: Json = { name };
  if (typeof definition.description === "string") out.description = definition.description;
  out.inputSchema = (definition.inputSchema ?? { type: "object" }) as Json;
  return out;
}

/** The digest of the gateway's own tools (fixed definitions), as policy sees their status. */
const OWN_DIGESTS: ReadonlyMap<string, string> = new Map(
  SEARCH_MODE_TOOLS.map((t) => [t.name as string, toolDigest(t)]),
);

/**
 * The status policy sees for a tools/call of the gateway's own `search_tools` (or a `call_tool`
 * that step 5 could not unwrap) on a search-mode server: `pinned`, with the fixed definition's
 * digest. They are the gateway's, not a member's, so a rule denying `unknown` tools leaves them
 * callable. Null for every other call (one comparison).
 */
export function ownToolStatus(tool: string): { status: "pinned"; digest: string } | null {
  if (tool !== SEARCH_TOOL && tool !== CALL_TOOL) return null;
  return { status: "pinned", digest: OWN_DIGESTS.get(tool) as string };
}
