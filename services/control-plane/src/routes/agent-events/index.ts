import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";
import { registerRecordAgentEvent } from "./record.ts";
import { registerAgentEventSummary } from "./summary.ts";

export function registerAgentEvents(app: Hono<AppEnv>, deps: Pick<Runtime, "store">) {
  registerRecordAgentEvent(app, deps);
  registerAgentEventSummary(app, deps);
}
