import type { Hono } from "hono";
import type { AppEnv } from "./app.ts";

/**
 * The unauthenticated probes every service serves: /healthz (200 when every dependency answers
 * `ping`, else 503) and /version.
 */
export function registerHealth(
  app: Hono<AppEnv>,
  deps: { ping: () => Promise<unknown>; version: string; commit: string },
): void {
  app.get("/healthz", async (c) => {
    try {
      await deps.ping();
      return c.json({ status: "ok" });
    } catch {
      return c.json({ status: "unavailable" }, 503);
    }
  });
  app.get("/version", (c) => c.json({ version: deps.version, commit: deps.commit }));
}
