// @stores both: credential writes are sealed rows in the store.
import { randomBytes } from "node:crypto";
import { credentials } from "@gw/db";
import { client, newTenant, type Res, serveApp, type TestApp, token } from "@gw/testkit";
import { openCredential } from "@gw/vault";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
beforeAll(async () => {
  // Trace level: the "never in a log line" assertions below cover every line the app can write.
  app = await serveApp(createControlPlaneApp, { GW_LOG_LEVEL: "trace" });
});
afterAll(() => app?.close());

/** Every secret a test sends, and every response it got: the leak checks look through them all. */
const secrets: string[] = [];
const responses: Res[] = [];
const secret = (label = "s") => {
  const s = `${label}-SECRET-${randomBytes(18).toString("hex")}`;
  secrets.push(s);
  return s;
};

async function asTenant(tenant = newTenant()) {
  const call = client(app.url, await token(tenant));
  return async (...args: Parameters<typeof call>) => {
    const res = await call(...args);
    responses.push(res);
    return res;
  };
}

const ID_RE = /^cred_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("credentials: happy path", () => {
  it("creates, reads, lists, rotates and deletes a bearer credential", async () => {
    const call = await asTenant();
    const first = secret("bearer");
    const created = await call("POST", "/v1/credentials", { name: "openai", kind: "bearer", secret: first });
    expect(created.status).toBe(201);
    const cred = created.json;
    expect(Object.keys(cred).sort()).toEqual(
      [
        "allowed_hosts",
        "audience",
        "auth_method",
        "authorization_url",
        "client_id",
        "created_at",
        "header_name",
        "hint",
        "id",
        "issuer",
        "kind",
        "name",
        "redirect_uri",
        "resource",
        "revocation_url",
        "scope",
        "scopes",
        "token_url",
        "updated_at",
        "version",
      ].sort(),
    );
    expect(cred).toMatchObject({ name: "openai", kind: "bearer", header_name: null, version: 1 });
    expect(cred.id).toMatch(ID_RE);
    expect(cred.hint).toBe(first.slice(-4));
    expect(new Date(cred.created_at).toISOString()).toBe(cred.created_at);
    expect(created.headers.get("location")).toBe(`/v1/credentials/${cred.id}`);

    const got = await call("GET", `/v1/credentials/${cred.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(cred);

    const list = await call("GET", "/v1/credentials");
    expect(list.status).toBe(200);
    expect(list.json).toEqual({ data: [cred], limit: 20, offset: 0, total: 1 });

    const second = secret("rotated");
    const put = await call("PUT", `/v1/credentials/${cred.id}`, { secret: second, name: "openai-prod" });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ id: cred.id, name: "openai-prod", kind: "bearer", version: 2 });
    expect(put.json.hint).toBe(second.slice(-4));
    expect(put.json.created_at).toBe(cred.created_at);
    expect(Date.parse(put.json.updated_at)).toBeGreaterThanOrEqual(Date.parse(cred.updated_at));
    expect((await call("GET", `/v1/credentials/${cred.id}`)).json).toEqual(put.json);

    // What the data plane will inject is the rotated secret, sealed under this process's keyring.
    const injected = await openCredential({
      db: app.rt.store.db,
      keyring: app.rt.keyring,
      tenantId: (await call("GET", "/v1/me")).json.tenant_id,
      credentialId: cred.id,
    });
    expect(injected).toEqual({ header: "authorization", value: `Bearer ${second}`, secret: second });

    const del = await call("DELETE", `/v1/credentials/${cred.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await call("GET", `/v1/credentials/${cred.id}`)).status).toBe(404);
    expect((await call("DELETE", `/v1/credentials/${cred.id}`)).status).toBe(404);
    expect((await call("GET", "/v1/credentials")).json).toMatchObject({ data: [], total: 0 });
  });

  it("api_key credentials default to X-Api-Key, take a custom header, and PUT can change kind", async () => {
    const call = await asTenant();
    const dflt = await call("POST", "/v1/credentials", { name: "k1", kind: "api_key", secret: secret() });
    expect(dflt.status).toBe(201);
    expect(dflt.json.header_name).toBe("X-Api-Key");
    const custom = await call("POST", "/v1/credentials", {
      name: "k2",
      kind: "api_key",
      secret: secret(),
      header_name: "X-Goog-Api-Key",
    });
    expect(custom.json.header_name).toBe("X-Goog-Api-Key");

    // Absent header_name keeps it; null goes back to the default; kind bearer drops it.
    const kept = await call("PUT", `/v1/credentials/${custom.json.id}`, { secret: secret() });
    expect(kept.json).toMatchObject({ header_name: "X-Goog-Api-Key", version: 2 });
    const reset = await call("PUT", `/v1/credentials/${custom.json.id}`, {
      secret: secret(),
      header_name: null,
    });
    expect(reset.json).toMatchObject({ header_name: "X-Api-Key", version: 3 });
    const toBearer = await call("PUT", `/v1/credentials/${custom.json.id}`, {
      secret: secret(),
      kind: "bearer",
    });
    expect(toBearer.json).toMatchObject({ kind: "bearer", header_name: null, version: 4 });
  });

  it("hints show nothing for short secrets and never more than a fifth", async () => {
    const call = await asTenant();
    const short = await call("POST", "/v1/credentials", { name: "short", kind: "bearer", secret: "abc123" });
    expect(short.json.hint).toBe("");
    const twelve = await call("POST", "/v1/credentials", {
      name: "twelve",
      kind: "bearer",
      secret: "abcdefghij12",
    });
    expect(twelve.json.hint).toBe("12");
  });

  it("paginates newest first and clamps limit to 1..100", async () => {
    const call = await asTenant();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(
        (await call("POST", "/v1/credentials", { name: `c${i}`, kind: "bearer", secret: secret() })).json.id,
      );
    }
    const page = await call("GET", "/v1/credentials?limit=2&offset=1");
    expect(page.json).toMatchObject({ limit: 2, offset: 1, total: 4 });
    expect(page.json.data.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    expect((await call("GET", "/v1/credentials?limit=1000")).json.limit).toBe(100);
    expect((await call("GET", "/v1/credentials?limit=0")).json.limit).toBe(1);
    expect((await call("GET", "/v1/credentials?limit=abc")).status).toBe(400);
    expect((await call("GET", "/v1/credentials?offset=-1")).status).toBe(400);
  });

  it("stores the secret encrypted, never in the clear", async () => {
    const call = await asTenant();
    const s = secret("at-rest");
    const id = (await call("POST", "/v1/credentials", { name: "r", kind: "bearer", secret: s })).json.id;
    const [row] = await app.rt.store.db.select().from(credentials).where(eq(credentials.id, id));
    expect(row?.kekId).toBe(app.rt.keyring.kekId);
    expect(row?.ciphertext.includes(Buffer.from(s))).toBe(false);
    expect(row?.wrappedKey.includes(Buffer.from(s))).toBe(false);
  });
});

describe("credentials: bad input gets a clear 400 or 409 and writes nothing", () => {
  const big = () => `big-SECRET-${"x".repeat(8 * 1024)}`;
  const cases: Array<[string, () => unknown, RegExp]> = [
    ["missing name", () => ({ kind: "bearer", secret: secret() }), /name/],
    ["empty name", () => ({ name: " ", kind: "bearer", secret: secret() }), /name/],
    ["missing kind", () => ({ name: "a", secret: secret() }), /kind/],
    [
      "wrong kind",
      () => ({ name: "a", kind: "basic", secret: secret() }),
      /kind: must be "bearer", "api_key", "oauth2_client_credentials", "oauth2_token_exchange" or "oauth2_authorization_code"/,
    ],
    ["missing secret", () => ({ name: "a", kind: "bearer" }), /secret/],
    ["empty secret", () => ({ name: "a", kind: "bearer", secret: "" }), /secret: must not be empty/],
    ["secret of the wrong type", () => ({ name: "a", kind: "bearer", secret: 123456789012 }), /secret/],
    [
      "oversized secret",
      () => ({ name: "a", kind: "bearer", secret: big() }),
      /secret: must be at most 8192/,
    ],
    [
      "secret with a newline",
      () => ({ name: "a", kind: "bearer", secret: `${secret()}\r\nX-Evil: 1` }),
      /secret/,
    ],
    ["secret with edge spaces", () => ({ name: "a", kind: "bearer", secret: ` ${secret()}` }), /secret/],
    [
      "unknown field",
      () => ({ name: "a", kind: "bearer", secret: secret(), scope_list: "x" }),
      /unknown field "scope_list"/,
    ],
    [
      "header_name on a bearer",
      () => ({ name: "a", kind: "bearer", secret: secret(), header_name: "X-Key" }),
      /header_name/,
    ],
    [
      "header_name not a token",
      () => ({ name: "a", kind: "api_key", secret: secret(), header_name: "X Key" }),
      /header_name/,
    ],
    [
      "header_name with a colon",
      () => ({ name: "a", kind: "api_key", secret: secret(), header_name: "X-Key:" }),
      /header_name/,
    ],
    ...[
      "Host",
      "content-length",
      "Connection",
      "Transfer-Encoding",
      "X-Gateway-Tenant-ID",
      "x-gateway-x",
      "X-PAYMENT",
    ].map((h): [string, () => unknown, RegExp] => [
      `reserved header_name ${h}`,
      () => ({ name: "a", kind: "api_key", secret: secret(), header_name: h }),
      /header_name: is a reserved header name/,
    ]),
    ["array body", () => [{ name: "a", kind: "bearer", secret: secret() }], /./],
  ];

  it.each(cases)("%s", async (_label, body, message) => {
    const call = await asTenant();
    const sent = body();
    const res = await call("POST", "/v1/credentials", sent);
    expect(res.status).toBe(400);
    expect(Object.keys(res.json)).toEqual(["error"]);
    expect(res.json.error).toMatch(message);
    const s = (sent as { secret?: unknown }).secret;
    if (typeof s === "string" && s.length > 0) expect(res.text).not.toContain(s.trim().slice(0, 40));
    expect((await call("GET", "/v1/credentials")).json.total).toBe(0);
  });

  it("rejects malformed JSON, a non-JSON content type and an oversized body", async () => {
    const call = await asTenant();
    const bad = await call("POST", "/v1/credentials", `{"name":"a","kind":"bearer","secret":"${secret()}"`, {
      "content-type": "application/json",
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ error: "request body must be valid JSON" });
    const text = await call("POST", "/v1/credentials", "name=a", { "content-type": "text/plain" });
    expect(text.status).toBe(400);
    const huge = await call("POST", "/v1/credentials", {
      name: "a",
      kind: "bearer",
      secret: "x".repeat(300 * 1024),
    });
    expect(huge.status).toBe(413);
    expect(huge.json).toEqual({ error: "request body is larger than 256 KiB" });
    expect((await call("GET", "/v1/credentials")).json.total).toBe(0);
  });

  it("refuses a duplicate name with 409, on create and on rename, and changes nothing", async () => {
    const call = await asTenant();
    const a = (await call("POST", "/v1/credentials", { name: "dup", kind: "bearer", secret: secret() })).json;
    const again = await call("POST", "/v1/credentials", { name: "dup", kind: "api_key", secret: secret() });
    expect(again.status).toBe(409);
    expect(again.json).toEqual({ error: "a credential with this name already exists" });
    const b = (await call("POST", "/v1/credentials", { name: "other", kind: "bearer", secret: secret() }))
      .json;
    const rename = await call("PUT", `/v1/credentials/${b.id}`, { name: "dup", secret: secret() });
    expect(rename.status).toBe(409);
    expect(rename.json).toEqual({ error: "a credential with this name already exists" });
    expect((await call("GET", `/v1/credentials/${b.id}`)).json).toEqual(b);
    expect((await call("GET", "/v1/credentials")).json.total).toBe(2);
    expect((await call("GET", `/v1/credentials/${a.id}`)).json).toEqual(a);
  });

  it("rejects bad PUT bodies and leaves the credential as it was", async () => {
    const call = await asTenant();
    const cred = (await call("POST", "/v1/credentials", { name: "p", kind: "api_key", secret: secret() }))
      .json;
    for (const body of [
      { name: "renamed-without-secret" },
      {},
      { secret: secret(), version: 9 },
      { secret: secret(), id: "cred_other" },
      { secret: secret(), kind: "oauth" },
      { secret: secret(), header_name: "Content-Length" },
      { secret: secret(), kind: "bearer", header_name: "X-Key" },
      { secret: "" },
    ]) {
      const res = await call("PUT", `/v1/credentials/${cred.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.json)).toEqual(["error"]);
    }
    expect((await call("GET", `/v1/credentials/${cred.id}`)).json).toEqual(cred);
  });

  it("answers 404 for malformed, unknown and foreign-prefix ids", async () => {
    const call = await asTenant();
    for (const id of [
      "nope",
      "cred_123",
      "cred_00000000-0000-7000-8000-000000000000",
      "agt_00000000-0000-7000-8000-000000000000",
    ]) {
      const get = await call("GET", `/v1/credentials/${id}`);
      expect(get.status).toBe(404);
      expect(get.json).toEqual({ error: "credential not found" });
      expect((await call("PUT", `/v1/credentials/${id}`, { secret: secret() })).status).toBe(404);
      // 404 comes before body validation.
      expect((await call("PUT", `/v1/credentials/${id}`, { bogus: true })).status).toBe(404);
      expect((await call("DELETE", `/v1/credentials/${id}`)).status).toBe(404);
    }
  });

  it("requires a token", async () => {
    for (const [method, path] of [
      ["GET", "/v1/credentials"],
      ["POST", "/v1/credentials"],
      ["GET", "/v1/credentials/cred_x"],
      ["PUT", "/v1/credentials/cred_x"],
      ["DELETE", "/v1/credentials/cred_x"],
    ] as const) {
      const res = await client(app.url)(method, path, method === "POST" || method === "PUT" ? {} : undefined);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.text).toBe("");
    }
  });
});

describe("credentials: tenant isolation", () => {
  it("never shows, changes or deletes one tenant's credential for another", async () => {
    const a = await asTenant();
    const b = await asTenant();
    const cred = (
      await a("POST", "/v1/credentials", { name: "shared-name", kind: "bearer", secret: secret() })
    ).json;
    expect((await b("GET", `/v1/credentials/${cred.id}`)).status).toBe(404);
    const put = await b("PUT", `/v1/credentials/${cred.id}`, { secret: secret(), name: "hijacked" });
    expect(put.status).toBe(404);
    expect(put.json).toEqual({ error: "credential not found" });
    expect((await b("DELETE", `/v1/credentials/${cred.id}`)).status).toBe(404);
    expect((await b("GET", "/v1/credentials")).json).toMatchObject({ data: [], total: 0 });
    // Names are unique per tenant, not globally.
    expect(
      (await b("POST", "/v1/credentials", { name: "shared-name", kind: "bearer", secret: secret() })).status,
    ).toBe(201);
    // B cannot point an agent at A's credential either.
    const agent = await b("POST", "/v1/agents", { name: "x", credential_ref: cred.id });
    expect(agent.status).toBe(400);
    expect(agent.json.error).toMatch(/credential_ref/);
    // A's credential is untouched.
    expect((await a("GET", `/v1/credentials/${cred.id}`)).json).toEqual(cred);
  });
});

describe("credentials: referenced by an agent", () => {
  it("cannot be deleted while a live agent references it; can after the agent is deleted", async () => {
    const call = await asTenant();
    const cred = (await call("POST", "/v1/credentials", { name: "in-use", kind: "bearer", secret: secret() }))
      .json;
    const agent = await call("POST", "/v1/agents", { name: "a", credential_ref: cred.id });
    expect(agent.status).toBe(201);
    const refused = await call("DELETE", `/v1/credentials/${cred.id}`);
    expect(refused.status).toBe(409);
    expect(refused.json).toEqual({
      error: "credential is referenced by an agent or the settlement configuration",
    });
    expect((await call("GET", `/v1/credentials/${cred.id}`)).json).toEqual(cred);
    // Rotation while referenced is fine.
    expect((await call("PUT", `/v1/credentials/${cred.id}`, { secret: secret() })).json.version).toBe(2);

    expect((await call("DELETE", `/v1/agents/${agent.json.id}`)).status).toBe(204);
    expect((await call("DELETE", `/v1/credentials/${cred.id}`)).status).toBe(204);
    expect((await call("GET", `/v1/credentials/${cred.id}`)).status).toBe(404);
  });

  it("an agent patched away from the credential releases it", async () => {
    const call = await asTenant();
    const cred = (await call("POST", "/v1/credentials", { name: "c", kind: "bearer", secret: secret() }))
      .json;
    const agent = (await call("POST", "/v1/agents", { name: "a", credential_ref: cred.id })).json;
    expect((await call("DELETE", `/v1/credentials/${cred.id}`)).status).toBe(409);
    expect((await call("PATCH", `/v1/agents/${agent.id}`, { credential_ref: null })).status).toBe(200);
    expect((await call("DELETE", `/v1/credentials/${cred.id}`)).status).toBe(204);
  });
});

describe("credentials: secrets never leave the server", () => {
  // Runs last in this file (vitest keeps declaration order): it checks every response and log line
  // the tests above produced.
  it("no secret appears in any response body, header or log line", () => {
    expect(secrets.length).toBeGreaterThan(20);
    expect(responses.length).toBeGreaterThan(50);
    const logs = app.logs.text();
    expect(logs).toContain('"msg":"request"');
    for (const s of secrets) {
      const needle = s.slice(0, 40);
      for (const res of responses) {
        expect(res.text).not.toContain(needle);
        expect([...res.headers.values()].join("\n")).not.toContain(needle);
      }
      expect(logs).not.toContain(needle);
    }
  });
});

describe("GW_CREDENTIALS", () => {
  it("mounted by default: capabilities says so", async () => {
    const call = await asTenant();
    expect((await call("GET", "/v1/capabilities")).json.surfaces.credentials).toBe(true);
  });

  it("off unmounts the family (404) and capabilities reports false", async () => {
    const off = await serveApp(createControlPlaneApp, { GW_CREDENTIALS: "off" });
    try {
      const call = client(off.url, await token(newTenant()));
      expect((await call("GET", "/v1/capabilities")).json.surfaces.credentials).toBe(false);
      const post = await call("POST", "/v1/credentials", { name: "a", kind: "bearer", secret: secret() });
      expect(post.status).toBe(404);
      expect(post.json).toEqual({ error: "not found" });
      for (const [m, p] of [
        ["GET", "/v1/credentials"],
        ["GET", "/v1/credentials/cred_00000000-0000-7000-8000-000000000000"],
        ["PUT", "/v1/credentials/cred_00000000-0000-7000-8000-000000000000"],
        ["DELETE", "/v1/credentials/cred_00000000-0000-7000-8000-000000000000"],
      ] as const) {
        expect((await call(m, p, m === "PUT" ? { secret: secret() } : undefined)).status, `${m} ${p}`).toBe(
          404,
        );
      }
      // The agents catalog is unconditional.
      expect((await call("GET", "/v1/agents")).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});
