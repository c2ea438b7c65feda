import type { Query } from "@gw/db";
import { type AnswerHooks, answerHooksFor, guardAnswerHook } from "@gw/forward";
import type { CompiledPolicy } from "@gw/policy";
import type { Logger } from "@gw/telemetry";
import type { Dispatcher } from "undici";
import { type CatalogDeps, createToolCatalog, type ToolCatalog } from "./catalog.ts";
import { toolsAnswerHook } from "./hook.ts";
import { ownToolStatus } from "./search.ts";
import { statusOf } from "./status.ts";

/** What a service builds the catalog from (a Runtime has all of it). */
export type CatalogRuntime = {
  store: { query: Query };
  logger: Logger;
  config: { GW_POLICY_CACHE_MS: number };
  changes: {
    publish: CatalogDeps["publish"];
    subscribe: CatalogDeps["subscribe"];
  };
};

/** The process's tool catalog, its views cached like policies and invalidated on the change bus. */
export function toolCatalogOf(rt: CatalogRuntime): ToolCatalog {
  return createToolCatalog({
    query: rt.store.query,
    logger: rt.logger,
    cacheMs: rt.config.GW_POLICY_CACHE_MS,
    publish: (change) => rt.changes.publish(change),
    subscribe: (fn) => rt.changes.subscribe(fn),
  });
}

/**
 * The policy gate's question for `tool_status`: the called tool's status and digest. On a
 * search-mode virtual server (`isSearchServer`), the gateway's own `search_tools` is `pinned`.
 */
export function toolStatusOf(
  catalog: ToolCatalog,
  isSearchServer?: (tenantId: string, agentId: string) => Promise<boolean>,
) {
  return async (tenantId: string, agentId: string, tool: string) => {
    const own = isSearchServer ? ownToolStatus(tool) : null;
    if (own && (await isSearchServer?.(tenantId, agentId))) return own;
    const facts = (await catalog.view(tenantId, agentId)).get(tool);
    return { status: statusOf(facts), digest: facts?.digest ?? null };
  };
}

/**
 * The answer hooks step 9 runs (packages/forward), per protocol: the catalog's and the answer
 * guard's (classifier webhooks go through `dispatcher`, the SSRF-guarded one).
 */
export function answerHooksOf(
  catalog: ToolCatalog,
  policyOf: (tenantId: string) => Promise<CompiledPolicy | null>,
  dispatcher: Dispatcher,
): AnswerHooks {
  return answerHooksFor({
    tools: toolsAnswerHook({ catalog, policyOf }),
    guard: guardAnswerHook({ policyOf, dispatcher }),
  });
}
