import type { Hono } from "hono";
import * as v from "valibot";
import type { AppEnv } from "./app.ts";

/** The body of /healthz: "ok" with 200, "unavailable" with 503. */
export const HealthResource = v.object({ status: v.picklist(["ok", "unavailable"]) });
/** The body of /version. */
export const VersionResource = v.object({ version: v.string(), commit: v.string() });
type Health = v.InferOutput<typeof HealthResource>;
type Version = v.InferOutput<typeof VersionResource>;

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
      return c.json({ status: "ok" } satisfies Health);
    } catch {
      return c.json({ status: "unavailable" } satisfies Health, 503);
    }
  });
  app.get("/version", (c) => c.json({ version: deps.version, commit: deps.commit } satisfies Version));
}
