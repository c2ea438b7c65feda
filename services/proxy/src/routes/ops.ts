import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

/** Unauthenticated probes; /healthz answers 503 when the store or Redis does not. */
export function registerOps(app: Hono<AppEnv>, deps: Pick<Runtime, "store" | "redis" | "config">) {
  app.get("/healthz", async (c) => {
    try {
      await Promise.all([deps.store.ping(), deps.redis?.ping()]);
      return c.json({ status: "ok" });
    } catch {
      return c.json({ status: "unavailable" }, 503);
    }
  });
  app.get("/version", (c) => c.json({ version: deps.config.GW_VERSION, commit: deps.config.GW_COMMIT }));
}
