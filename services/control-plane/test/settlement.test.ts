// @stores both: settlement configuration is a row in the store.
import { randomBytes } from "node:crypto";
import { client, newTenant, type Res, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
let strict: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp, { GW_LOG_LEVEL: "trace" });
  // The deployment default: https only, no private ranges exempted.
  strict = await serveApp(createControlPlaneApp, {
    GW_ALLOW_HTTP_UPSTREAMS: "false",
    GW_SSRF_ALLOW_CIDRS: "",
  });
});
afterAll(async () => {
  await app?.close();
  await strict?.close();
});

const responses: Res[] = [];
async function asTenant(target = app, tenant = newTenant()) {
  const call = client(target.url, await token(tenant));
  return async (...args: Parameters<typeof call>) => {
    const res = await call(...args);
    responses.push(res);
    return res;
  };
}

describe("settlement config: happy path", () => {
  it("404 before any, then PUT creates, GET reads, PUT replaces", async () => {
    const call = await asTenant();
    const none = await call("GET", "/v1/settlement/config");
    expect(none.status).toBe(404);
    expect(none.json).toEqual({ error: "settlement configuration not found" });

    const put = await call("PUT", "/v1/settlement/config", {
      facilitator_url: "https://facilitator.example/x402",
    });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({
      facilitator_url: "https://facilitator.example/x402",
      facilitator_credential_ref: null,
      updated_at: expect.any(String),
    });
    expect(new Date(put.json.updated_at).toISOString()).toBe(put.json.updated_at);
    expect((await call("GET", "/v1/settlement/config")).json).toEqual(put.json);

    const secret = `fac-SECRET-${randomBytes(12).toString("hex")}`;
    const cred = await call("POST", "/v1/credentials", { name: "facilitator", kind: "api_key", secret });
    expect(cred.status).toBe(201);
    const replaced = await call("PUT", "/v1/settlement/config", {
      facilitator_url: "https://other.example",
      facilitator_credential_ref: cred.json.id,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toMatchObject({
      facilitator_url: "https://other.example/",
      facilitator_credential_ref: cred.json.id,
    });
    const got = await call("GET", "/v1/settlement/config");
    expect(got.json).toEqual(replaced.json);
    expect(got.text).not.toContain(secret);
    expect(app.logs.text()).not.toContain(secret);

    const cleared = await call("PUT", "/v1/settlement/config", {
      facilitator_url: "https://other.example",
      facilitator_credential_ref: null,
    });
    expect(cleared.json.facilitator_credential_ref).toBeNull();
  });

  it("capabilities reports the settlement surface", async () => {
    const call = await asTenant();
    expect((await call("GET", "/v1/capabilities")).json.surfaces.settlement).toBe(true);
  });
});

describe("settlement config: errors", () => {
  const bad: Array<[string, unknown]> = [
    ["missing url", {}],
    ["unknown field", { facilitator_url: "https://f.example", extra: 1 }],
    ["url not a string", { facilitator_url: 42 }],
    ["not a URL", { facilitator_url: "facilitator" }],
    ["credentials in the URL", { facilitator_url: "https://user:pw@f.example" }],
    ["localhost", { facilitator_url: "https://localhost/settle" }],
    ["metadata address", { facilitator_url: "https://169.254.169.254/" }],
    ["private range", { facilitator_url: "https://10.0.0.1/" }],
    ["decimal IPv4 spelling", { facilitator_url: "https://167772161/" }],
    ["IPv6 loopback", { facilitator_url: "https://[::1]/" }],
    ["IPv4-mapped private", { facilitator_url: "https://[::ffff:10.0.0.1]/" }],
    ["plain http", { facilitator_url: "http://f.example/" }],
    ["loopback without the test exemption", { facilitator_url: "https://127.0.0.1/" }],
    ["ftp", { facilitator_url: "ftp://f.example/" }],
    [
      "credential that does not exist",
      {
        facilitator_url: "https://f.example",
        facilitator_credential_ref: "cred_0190f2a0-0000-7000-8000-000000000000",
      },
    ],
    [
      "credential ref not an id",
      { facilitator_url: "https://f.example", facilitator_credential_ref: "nope" },
    ],
    ["huge url", { facilitator_url: `https://f.example/${"a".repeat(5000)}` }],
  ];
  for (const [name, body] of bad) {
    it(`400: ${name}`, async () => {
      const call = await asTenant(strict);
      const res = await call("PUT", "/v1/settlement/config", body);
      expect(res.status).toBe(400);
      expect(typeof res.json.error).toBe("string");
      expect((await call("GET", "/v1/settlement/config")).status).toBe(404);
    });
  }

  it("400 on bad JSON and a wrong content type", async () => {
    const call = await asTenant();
    expect(
      (await call("PUT", "/v1/settlement/config", "{nope", { "content-type": "application/json" })).status,
    ).toBe(400);
    expect((await call("PUT", "/v1/settlement/config", "x", { "content-type": "text/plain" })).status).toBe(
      400,
    );
  });

  it("another tenant's credential is not a credential of this tenant; configs do not cross tenants", async () => {
    const a = await asTenant();
    const b = await asTenant();
    const cred = await a("POST", "/v1/credentials", { name: "f", kind: "bearer", secret: "s3cr3t-value" });
    const res = await b("PUT", "/v1/settlement/config", {
      facilitator_url: "https://f.example",
      facilitator_credential_ref: cred.json.id,
    });
    expect(res.status).toBe(400);
    expect((await a("PUT", "/v1/settlement/config", { facilitator_url: "https://a.example" })).status).toBe(
      200,
    );
    expect((await b("GET", "/v1/settlement/config")).status).toBe(404);
  });

  it("401 without a token, no body", async () => {
    for (const method of ["GET", "PUT"]) {
      const res = await client(app.url)(method, "/v1/settlement/config", method === "PUT" ? {} : undefined);
      expect(res.status).toBe(401);
      expect(res.text).toBe("");
    }
  });
});

describe("settlement config: the credential it names", () => {
  it("cannot be deleted while the configuration references it (409), can after", async () => {
    const call = await asTenant();
    const cred = await call("POST", "/v1/credentials", { name: "fac", kind: "bearer", secret: "s3cr3t-fac" });
    await call("PUT", "/v1/settlement/config", {
      facilitator_url: "https://f.example",
      facilitator_credential_ref: cred.json.id,
    });
    const refused = await call("DELETE", `/v1/credentials/${cred.json.id}`);
    expect(refused.status).toBe(409);
    expect(refused.json).toEqual({
      error: "credential is referenced by an agent or the settlement configuration",
    });
    await call("PUT", "/v1/settlement/config", { facilitator_url: "https://f.example" });
    expect((await call("DELETE", `/v1/credentials/${cred.json.id}`)).status).toBe(204);
  });
});
