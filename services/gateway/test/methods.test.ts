import type { TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "./helpers.ts";

// A known path asked with a method it does not serve is 405 with `Allow` on every route family
// (docs/api.md), computed from the registered routes; an unknown path stays 404.
let gw: TestApp;
let call: Caller;
beforeAll(async () => {
  gw = await startGateway({ GW_OAUTH_AUTHORIZATION_SERVERS: "https://issuer.example" });
  call = await caller(gw);
});
afterAll(() => gw?.close());

const ID = "agt_0190a0a0-0000-7000-8000-000000000000";
const CASES: Array<[method: string, path: string, allow: string]> = [
  ["PUT", "/v1/agents", "GET, HEAD, POST"],
  ["DELETE", "/v1/agents", "GET, HEAD, POST"],
  ["POST", `/v1/agents/${ID}`, "DELETE, GET, HEAD, PATCH"],
  ["PUT", `/v1/agents/${ID}`, "DELETE, GET, HEAD, PATCH"],
  ["PATCH", "/v1/credentials", "GET, HEAD, POST"],
  ["PATCH", "/v1/credentials/cred_x", "DELETE, GET, HEAD, PUT"],
  ["POST", "/v1/invocations", "GET, HEAD"],
  ["DELETE", "/v1/invocations/inv_x", "GET, HEAD"],
  ["POST", "/v1/invocations/inv_x/receipt", "GET, HEAD"],
  ["POST", "/v1/policy", "DELETE, GET, HEAD, PUT"],
  ["PATCH", "/v1/policy", "DELETE, GET, HEAD, PUT"],
  ["DELETE", "/v1/policy/decisions", "GET, HEAD"],
  ["PUT", "/v1/agent-events", "POST"],
  ["GET", "/v1/agent-events", "POST"],
  ["POST", "/v1/agent-events/summary", "GET, HEAD"],
  ["POST", "/v1/analytics", "GET, HEAD"],
  ["POST", "/v1/settlement/config", "GET, HEAD, PUT"],
  ["DELETE", "/v1/me", "GET, HEAD"],
  ["POST", "/v1/capabilities", "GET, HEAD"],
  ["PUT", "/v1/receipts/jwks", "GET, HEAD"],
  ["POST", "/healthz", "GET, HEAD"],
  ["DELETE", "/version", "GET, HEAD"],
  ["POST", "/openapi.json", "GET, HEAD"],
  ["POST", "/docs", "GET, HEAD"],
  ["PUT", "/console/", "GET, HEAD"],
  ["POST", `/.well-known/oauth-protected-resource/v1/proxy/${ID}`, "GET, HEAD"],
  ["OPTIONS", "/v1/agents", "GET, HEAD, POST"],
  ["HEAD", "/v1/agent-events", "POST"],
  // The poll, on the proxy's own app.
  ["POST", `/v1/proxy/${ID}/invocations/inv_x`, "GET, HEAD"],
  ["DELETE", `/v1/proxy/${ID}/invocations/inv_x`, "GET, HEAD"],
];

describe("405 with Allow", () => {
  it.each(CASES)("%s %s → 405, Allow: %s", async (method, path, allow) => {
    const res = await call(method, path);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
    if (method !== "HEAD") expect(res.json).toEqual({ error: `method not allowed; use ${allow}` });
  });

  it("an unknown path stays 404 whatever the method, and a served method is not refused", async () => {
    for (const [method, path] of [
      ["GET", "/v1/nothing"],
      ["PUT", "/v1/nothing"],
      ["POST", "/v1/agents/x/y"],
      ["DELETE", "/v1/policy/x"],
      ["GET", "/nothing"],
      ["PUT", "/v1/proxy/x/invocations/inv_x/more"],
    ] as const) {
      const res = await call(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json).toEqual({ error: "not found" });
      expect(res.headers.get("allow")).toBeNull();
    }
    expect((await call("GET", "/v1/policy")).status).toBe(200);
    expect((await call("HEAD", "/v1/me")).status).toBe(200);
  });

  it("still asks for a token first on the API (401, no body)", async () => {
    const res = await fetch(`${gw.url}/v1/agents`, { method: "PUT" });
    expect(res.status).toBe(401);
    expect(await res.text()).toBe("");
  });
});
