import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";
import { registerGetInvocation } from "./get.ts";
import { registerListInvocations } from "./list.ts";
import { registerGetReceipt } from "./receipt.ts";

export function registerInvocations(app: Hono<AppEnv>, deps: Pick<Runtime, "store" | "features">) {
  registerListInvocations(app, deps);
  registerGetInvocation(app, deps);
  registerGetReceipt(app, deps);
}
