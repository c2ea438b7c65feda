// @stores both: readiness reports the store's health.
import { client, serveApp } from "@gw/testkit";
import { describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

describe("GET /healthz", () => {
  it("answers 200 when the store (and Redis, when used) answer", async () => {
    const app = await serveApp(createControlPlaneApp);
    try {
      const res = await client(app.url)("GET", "/healthz");
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ status: "ok" });
    } finally {
      await app.close();
    }
  });

  it("answers 503 when Redis does not answer, instead of hanging", async () => {
    // Nothing listens on port 1: ioredis keeps reconnecting and would queue the ping for ever.
    const app = await serveApp(createControlPlaneApp, { REDIS_URL: "redis://127.0.0.1:1" });
    try {
      const res = await client(app.url)("GET", "/healthz");
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ status: "unavailable" });
    } finally {
      await app.close();
    }
  });
});
