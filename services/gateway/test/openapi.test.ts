// @stores once: the OpenAPI document against the routes.
import { createControlPlaneApp } from "@gw/control-plane";
import { type AppEnv, queryTakenBy } from "@gw/http";
import { createProxyApp, DIRECT_ROUTES } from "@gw/proxy";
import { serveApp, type TestApp, token } from "@gw/testkit";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The discovery routes exist only with authorization servers configured: this deployment has them,
// the second one (below) does not and must document exactly that.
const OAUTH = { GW_OAUTH_AUTHORIZATION_SERVERS: "https://issuer.example" };

let app: TestApp;
let routes: { method: string; path: string }[] = [];
let controlPlane: Hono<AppEnv>;
beforeAll(async () => {
  app = await serveApp(
    (rt) => {
      const cp = createControlPlaneApp(rt);
      controlPlane = cp;
      const proxy = createProxyApp(rt).app;
      routes = [...registered(cp), ...registered(proxy), ...DIRECT_ROUTES];
      return cp;
    },
    OAUTH,
    "control-plane",
  );
});
afterAll(() => app?.close());

/** The routes an app registers: concrete methods only (`ALL` is middleware or the 405 catch-all). */
function registered(h: Pick<Hono<AppEnv>, "routes">): { method: string; path: string }[] {
  return h.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method.toLowerCase(), path: r.path }));
}

/** Static files of the two pages: described by the page's own entry, not one entry per asset. */
const UI_ASSETS = new Set(["/console", "/console/", "/console/config.json", "/console/:file", "/docs/:file"]);

const shape = (path: string) => path.replace(/:[\w]+|\{[\w]+\}/g, "{}");
const key = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${shape(r.path)}`;

async function fetchDoc(base: string) {
  const res = await fetch(`${base}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is free-form JSON.
  return (await res.json()) as Record<string, any>;
}

function documented(doc: Record<string, Record<string, unknown>>): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    Object.keys(item).map((method) => key({ method, path })),
  );
}

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document, served without a token", async () => {
    const doc = await fetchDoc(app.url);
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator().validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    // The validator does reject a broken document (a response without its required description).
    const broken = { ...doc, paths: { "/x": { get: { responses: { "200": {} } } } } };
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("documents every route the control plane and proxy register, and nothing else", async () => {
    const doc = await fetchDoc(app.url);
    const served = new Set(routes.filter((r) => !UI_ASSETS.has(r.path)).map(key));
    const described = new Set(documented(doc));
    expect([...served].filter((k) => !described.has(k)).sort()).toEqual([]);
    expect([...described].filter((k) => !served.has(k)).sort()).toEqual([]);
    // The route families of docs/interface.md are really there (guards against both lists being empty).
    for (const k of [
      "POST /v1/proxy/{}",
      "POST /v1/proxy/{}/stream",
      "GET /v1/proxy/{}/stream",
      "DELETE /v1/proxy/{}/stream",
      "GET /v1/proxy/{}/invocations/{}",
      "GET /healthz",
      "GET /version",
      "GET /.well-known/oauth-protected-resource/v1/proxy/{}",
    ]) {
      expect(described).toContain(k);
    }
  });

  it("describes auth, statuses and bodies as the spec does", async () => {
    const doc = await fetchDoc(app.url);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.paths["/healthz"].get.security).toEqual([]);
    const create = doc.paths["/v1/agents"].post;
    expect(create.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/CreateAgent",
    });
    // Unknown fields are refused (strict valibot objects → additionalProperties false).
    expect(doc.components.schemas.CreateAgent.additionalProperties).toBe(false);
    expect(doc.components.schemas.CreateAgent.required).toEqual(["name"]);
    expect(create.responses["201"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/Agent",
    });
    expect(create.responses["400"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/Error",
    });
    // 401 and 500: no body.
    expect(create.responses["401"].content).toBeUndefined();
    expect(create.responses["500"].content).toBeUndefined();
    const transact = doc.paths["/v1/proxy/{id}"].post;
    expect(transact.responses["202"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/Accepted",
    });
    expect(transact.responses["402"].content["application/json"].schema.anyOf).toEqual([
      { $ref: "#/components/schemas/X402Challenge" },
      { $ref: "#/components/schemas/Error" },
    ]);
    expect(transact.responses["429"].headers["Retry-After"]).toBeDefined();
    const idParam = transact.parameters.find((p: { name: string }) => p.name === "id");
    expect(idParam).toMatchObject({ in: "path", required: true, schema: { pattern: "^agt_[0-9a-f-]{36}$" } });
    const poll = doc.paths["/v1/proxy/{id}/invocations/{inv_id}"].get;
    expect(poll.parameters.map((p: { schema: { pattern: string } }) => p.schema.pattern)).toEqual([
      "^agt_[0-9a-f-]{36}$",
      "^inv_[0-9a-f-]{36}$",
    ]);
    expect(doc.servers).toEqual([{ url: app.rt.config.publicUrl }]);
  });

  it("lists exactly the query parameters each control-plane route takes, and its 400 for any other", async () => {
    const doc = await fetchDoc(app.url);
    // What each route takes, from its `takesQuery` declaration; a /v1 route that declares none takes none.
    const taken = new Map<string, string[]>();
    for (const r of controlPlane.routes) {
      if (r.method === "ALL" || !r.path.startsWith("/v1/")) continue;
      const k = key({ method: r.method, path: r.path });
      const names = queryTakenBy(r.handler);
      if (names) taken.set(k, [...names].sort());
      else if (!taken.has(k)) taken.set(k, []);
    }
    expect(taken.get("GET /v1/agents")).toEqual(["limit", "offset", "protocol"]);
    type Op = {
      parameters?: { in: string; name: string }[];
      responses: Record<string, { description: string }>;
    };
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Op>>)) {
      if (!path.startsWith("/v1/") || path.startsWith("/v1/proxy/")) continue;
      for (const [method, op] of Object.entries(item)) {
        const k = key({ method, path });
        const listed = (op.parameters ?? [])
          .filter((p) => p.in === "query")
          .map((p) => p.name)
          .sort();
        expect(listed, k).toEqual(taken.get(k));
        expect(op.responses["400"]?.description, k).toMatch(/query parameter/i);
      }
    }
  });

  it("documents only what a deployment mounts", async () => {
    const bare = await serveApp(createControlPlaneApp, { GW_CREDENTIALS: "off" }, "control-plane");
    try {
      const doc = await fetchDoc(bare.url);
      const paths = Object.keys(doc.paths);
      expect(paths.some((p) => p.startsWith("/.well-known/"))).toBe(false);
      expect(paths.some((p) => p.startsWith("/v1/credentials"))).toBe(false);
      expect(paths).toContain("/v1/agents");
      // And what is not documented is not served.
      const t = await token("tenant-a");
      const creds = await fetch(`${bare.url}/v1/credentials`, { headers: { authorization: `Bearer ${t}` } });
      expect(creds.status).toBe(404);
      const meta = await fetch(
        `${bare.url}/.well-known/oauth-protected-resource/v1/proxy/agt_01890000-0000-7000-8000-000000000000`,
      );
      expect(meta.status).toBe(404);
    } finally {
      await bare.close();
    }
  });
});
