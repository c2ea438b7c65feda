import { createAgentCards } from "@gw/forward";
import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import { toolCatalogOf } from "@gw/tools";
import type { Hono } from "hono";
import { registerAgentCard } from "./card.ts";
import { registerCreateAgent } from "./create.ts";
import type { AgentRouteDeps } from "./ctx.ts";
import { registerDeleteAgent } from "./delete.ts";
import { registerGetAgent } from "./get.ts";
import { registerListAgents } from "./list.ts";
import { registerTools } from "./tools/index.ts";
import { registerUpdateAgent } from "./update.ts";

export function registerAgents(
  app: Hono<AppEnv>,
  deps: AgentRouteDeps &
    Pick<Runtime, "dispatcher" | "keyring" | "oauth" | "logger" | "config" | "changes" | "receipts">,
) {
  registerCreateAgent(app, deps);
  registerListAgents(app, deps);
  registerGetAgent(app, deps);
  registerUpdateAgent(app, deps);
  registerDeleteAgent(app, deps);
  registerAgentCard(app, deps, createAgentCards(deps));
  registerTools(app, deps, {
    store: deps.store,
    dispatcher: deps.dispatcher,
    keyring: deps.keyring,
    oauth: deps.oauth,
    config: deps.config,
    catalog: toolCatalogOf(deps),
    log: deps.logger,
  });
}
