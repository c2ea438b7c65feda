import { client, newTenant, serveApp, token } from "@gw/testkit";
import { describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

describe("GET /v1/capabilities", () => {
  it("reports the store, the key posture and the limits the handlers enforce", async () => {
    const app = await serveApp(createControlPlaneApp);
    try {
      const res = await client(app.url, await token(newTenant()))("GET", "/v1/capabilities");
      expect(res.status).toBe(200);
      expect(res.json.posture).toEqual({
        store: app.rt.store.kind,
        kms_key_configured: false,
        receipts_enabled: false,
        receipt_actor: "",
        settlement_orchestration: true,
      });
      expect(res.json.verified_action_required).toBe(false);
      expect(res.json.limits).toEqual({
        transact_max_body_bytes: 33554432,
        captured_body_max_bytes: 1048576,
        model_header_max_bytes: 256,
        bundle_max_bytes: 1048576,
        invocations_max_limit: 100,
        policy_decisions_max_limit: 100,
        analytics_max_range_days: 31,
        agent_event_max_range_days: 31,
      });
      expect(Object.keys(res.json.surfaces).sort()).toEqual([
        "agent_events",
        "analytics",
        "approvals",
        "credentials",
        "invocations",
        "policy",
        "proxy",
        "receipts",
        "settlement",
      ]);
    } finally {
      await app.close();
    }
  });

  it("says memory for the embedded store and postgres for DATABASE_URL", async () => {
    const memory = await serveApp(createControlPlaneApp, { DATABASE_URL: undefined });
    try {
      const res = await client(memory.url, await token(newTenant()))("GET", "/v1/capabilities");
      expect(res.json.posture.store).toBe("memory");
    } finally {
      await memory.close();
    }
    if (process.env.DATABASE_URL) {
      const pg = await serveApp(createControlPlaneApp);
      try {
        const res = await client(pg.url, await token(newTenant()))("GET", "/v1/capabilities");
        expect(res.json.posture.store).toBe("postgres");
      } finally {
        await pg.close();
      }
    }
  });

  it("reports a configured key-encryption key and settle-then-forward off, never their values", async () => {
    const key = Buffer.alloc(32, 7).toString("base64");
    const app = await serveApp(createControlPlaneApp, { GW_KMS_KEY: key, GW_SETTLE_THEN_FORWARD: "false" });
    try {
      const res = await client(app.url, await token(newTenant()))("GET", "/v1/capabilities");
      expect(res.json.posture.kms_key_configured).toBe(true);
      expect(res.json.posture.settlement_orchestration).toBe(false);
      expect(res.text).not.toContain(key);
    } finally {
      await app.close();
    }
  });
});
