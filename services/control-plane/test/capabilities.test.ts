// @stores both: posture reports which store the deployment runs on.
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
        store: app.rt.store.kind === "postgres" ? "postgres" : "memory",
        data_dir: null,
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
        json_body_max_bytes: 262144,
        agent_event_max_bytes: 32768,
        approval_arguments_max_bytes: 65536,
        mcp_name_max_bytes: 256,
        tool_list_max_bytes: 8388608,
        tool_name_max_bytes: 256,
        virtual_members_max: 16,
        virtual_member_answer_max_bytes: 8388608,
        credential_secret_max_bytes: 8192,
        payment_header_max_chars: 8192,
        oauth_token_response_max_bytes: 65536,
        facilitator_answer_max_bytes: 65536,
        classifier_answer_max_bytes: 16384,
      });
      expect(Object.keys(res.json.surfaces).sort()).toEqual([
        "agent_events",
        "analytics",
        "approvals",
        "audit",
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

  it("the caps it reports are the ones creation enforces (credential secret, virtual server members)", async () => {
    const app = await serveApp(createControlPlaneApp);
    try {
      const call = client(app.url, await token(newTenant()));
      const { limits } = (await call("GET", "/v1/capabilities")).json;
      const secretOf = (n: number) => "s".repeat(n);
      const atCap = await call("POST", "/v1/credentials", {
        name: "at-cap",
        kind: "bearer",
        secret: secretOf(limits.credential_secret_max_bytes),
      });
      expect(atCap.status).toBe(201);
      const over = await call("POST", "/v1/credentials", {
        name: "over-cap",
        kind: "bearer",
        secret: secretOf(limits.credential_secret_max_bytes + 1),
      });
      expect(over.status).toBe(400);
      expect(over.json.error).toContain(String(limits.credential_secret_max_bytes));

      const members = Array.from({ length: limits.virtual_members_max + 1 }, (_, i) => ({
        agent_id: `agt_0190b1c2-0000-7000-8000-${String(i).padStart(12, "0")}`,
        prefix: `p${i}`,
      }));
      const tooMany = await call("POST", "/v1/agents", { name: "portal", protocol: "mcp", members });
      expect(tooMany.status).toBe(400);
      expect(tooMany.json.error).toContain(`at most ${limits.virtual_members_max} members`);
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
