import type { AppEnv } from "@gw/http";
import type { RefreshDeps } from "@gw/tools";
import type { Hono } from "hono";
import type { AgentRouteDeps } from "../ctx.ts";
import { registerGetTool } from "./get.ts";
import { registerListTools } from "./list.ts";
import { registerPinTools } from "./pin.ts";
import { registerRefreshTools } from "./refresh.ts";
import { registerTrySearch } from "./search.ts";

/** The MCP tool catalog of an agent (docs/tools.md). */
export function registerTools(app: Hono<AppEnv>, deps: AgentRouteDeps, refresh: RefreshDeps) {
  registerListTools(app, deps);
  // Before /tools/:name, so "pin" is never read as a tool name.
  registerPinTools(app, deps);
  registerRefreshTools(app, deps, refresh);
  registerTrySearch(app, deps);
  registerGetTool(app, deps);
}
