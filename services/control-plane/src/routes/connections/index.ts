import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";
import { registerCompleteConnection } from "./complete.ts";
import { registerCreateConnection } from "./create.ts";
import type { ConnectionRouteDeps } from "./ctx.ts";
import { registerDeleteConnection } from "./delete.ts";
import { registerListConnections } from "./list.ts";

export { registerConnectionCallback } from "./callback.ts";

/** The /v1 routes of connections (docs/connections.md); the callback is public and mounted apart. */
export function registerConnections(app: Hono<AppEnv>, deps: ConnectionRouteDeps) {
  registerCreateConnection(app, deps);
  registerCompleteConnection(app, deps);
  registerListConnections(app, deps);
  registerDeleteConnection(app, deps);
}
