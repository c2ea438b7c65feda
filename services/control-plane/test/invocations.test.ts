// @stores both: the list's filters and paging are SQL.
import { newId } from "@gw/core";
import { invocationRepo } from "@gw/invocations";
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp);
});
afterAll(() => app?.close());

describe("invocations: list", () => {
  it("lists the tenant's invocations with filters and a total, without bodies", async () => {
    const tenant = newTenant();
    const call = client(app.url, await token(tenant));
    const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: "https://api.example.com/x" }))
      .json.id as string;
    const id = newId("inv");
    // The proxy writes invocations; here the row is written the way it does.
    await invocationRepo.insert(app.rt.store.db, tenant, {
      id,
      agentId: agent,
      mode: "streaming",
      status: "succeeded",
    });
    const all = await call("GET", `/v1/invocations?agent_id=${agent}`);
    expect(all.status).toBe(200);
    expect(all.json.total).toBe(1);
    expect(all.json.data[0].id).toBe(id);
    const none = await call("GET", `/v1/invocations?agent_id=${agent}&status=pending`);
    expect(none.json).toMatchObject({ total: 0, data: [] });
    const other = client(app.url, await token(newTenant()));
    expect((await other("GET", "/v1/invocations")).json.total).toBe(0);
  });
});
