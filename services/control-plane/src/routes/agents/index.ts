import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import { toolCatalogOf } from "@gw/tools";
import type { Hono } from "hono";
import { registerCreateAgent } from "./create.ts";
import type { AgentRouteDeps } from "./ctx.ts";
import { registerDeleteAgent } from "./delete.ts";
import { registerGetAgent } from "./get.ts";
import { registerListAgents } from "./list.ts";
import { registerTools } from "./tools/index.ts";
import { registerUpdateAgent } from "./update.ts";

export function registerAgents(
  app: Hono<AppEnv>,
  deps: AgentRouteDeps & Pick<Runtime, "dispatcher" | "keyring" | "logger" | "config" | "changes">,
) {
  registerCreateAgent(app, deps);
  registerListAgents(app, deps);
  registerGetAgent(app, deps);
  registerUpdateAgent(app, deps);
  registerDeleteAgent(app, deps);
  registerTools(app, deps, {
    dispatcher: deps.dispatcher,
    keyring: deps.keyring,
    catalog: toolCatalogOf(deps),
  });
}
