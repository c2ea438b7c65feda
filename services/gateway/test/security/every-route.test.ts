// @stores once: authentication and refusals of every route, decided before the store.
import {
  type ApiRoute,
  client,
  crossTenantCase,
  fillPath,
  NEVER_IDS,
  openApiRoutes,
  securityCases,
  type TestApp,
} from "@gw/testkit";
import { type Recorded, record, recordingCaller, sweepSecrets, Tally } from "@gw/testkit/sweep";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createAgent, pollDone, startGateway, upstreamPool } from "../helpers.ts";

// The shared security cases (packages/testkit, securityCases / crossTenantCase) over every
// operation GET /openapi.json lists: a route added to the document gets the 401 variants and the
// cross-tenant 404 without anyone writing them.

const seen: Recorded[] = [];
const tally = new Tally();
const pool = upstreamPool();
const secret = `sk-every-route-${crypto.randomUUID()}`;
let app: TestApp;
let a: Caller;
let b: Caller;
let routes: ApiRoute[];
let upstreamHits = 0;
const ids = { agt: "", cred: "", inv: "", apr: "" };

beforeAll(async () => {
  app = await startGateway();
  a = await recordingCaller(app, seen);
  // b holds every scope a route may ask for: its refusals must come from tenancy alone.
  b = await recordingCaller(app, seen, { scopes: ["invocations:read_body", "approvals:decide"] });
  const up = await pool.up((_req, res) => {
    upstreamHits++;
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  ids.cred = (await a("POST", "/v1/credentials", { name: "a-cred", kind: "bearer", secret })).json.id;
  ids.agt = await createAgent(a, { upstream_url: `${up.url}/`, credential_ref: ids.cred });
  ids.inv = (await a("POST", `/v1/proxy/${ids.agt}`, { q: 1 })).json.invocation_id;
  await pollDone(a, ids.agt, ids.inv);
  // An approval of tenant a: a call its policy holds for a person (never forwarded).
  const held = await createAgent(a, { upstream_url: `${up.url}/` });
  await a("PUT", "/v1/policy", { rules: [{ action: "require_approval", match: { agents: [held] } }] });
  ids.apr = (await a("POST", `/v1/proxy/${held}/stream`, { q: 2 })).json.approval_id;
  expect(ids.apr).toMatch(/^apr_/);
  routes = await openApiRoutes(app.url);
});
afterAll(async () => {
  tally.print("Every documented route (401 variants; another tenant's ids → the never-existing answer)");
  if (app) await sweepSecrets(app, seen, [secret]);
  await pool.closeAll();
  await app?.close();
});

describe("every route of the OpenAPI document", () => {
  it("lists the control plane's and the data plane's routes", () => {
    const listed = routes.map((r) => `${r.method} ${r.path}`);
    for (const r of ["POST /v1/agents", "POST /v1/proxy/{id}", "GET /v1/proxy/{id}/invocations/{inv_id}"]) {
      expect(listed).toContain(r);
    }
    // Every id parameter names its prefix; a tool `{name}` is the one parameter that is no id.
    for (const r of routes) {
      for (const p of r.params.filter((p) => p.name !== "name")) {
        expect(p.prefix, `${r.method} ${r.path} {${p.name}}`).toBeDefined();
      }
    }
  });

  it("answers every 401 variant with 401 and no body, on every route but the public ones", async () => {
    const hitsBefore = upstreamHits;
    for (const route of routes.filter((r) => !r.public)) {
      for (const [name, run, challenge] of securityCases(app.url, route)) {
        const res = await run();
        record(seen, name, res);
        tally.add("401 variants", res.status === 401);
        expect(res.status, name).toBe(401);
        expect(res.text, name).toBe("");
        // RFC 6750 §3: invalid_token exactly when a bearer token was presented.
        expect(res.headers.get("www-authenticate"), name).toBe(challenge);
      }
    }
    expect(upstreamHits).toBe(hitsBefore);
  });

  it("takes the Bearer scheme name in any case (RFC 7235), on every route", async () => {
    for (const route of routes.filter((r) => !r.public)) {
      const body = route.method === "GET" || route.method === "DELETE" ? undefined : {};
      for (const scheme of ["bearer", "BEARER", "bEaReR"]) {
        // Never-existing ids: the answer is whatever follows authentication, never a write.
        const path = fillPath(route, NEVER_IDS);
        const res = await a(route.method, path, body, { authorization: `${scheme} ${a.token}` });
        expect(res.status, `${route.method} ${path} with ${scheme}`).not.toBe(401);
      }
    }
  });

  it("leaves the public routes open", async () => {
    for (const route of routes.filter((r) => r.public)) {
      const res = await client(app.url)(route.method, route.path);
      expect(res.status, `${route.method} ${route.path}`).not.toBe(401);
    }
  });

  it("answers another tenant's ids exactly as never-existing ids: 404", async () => {
    const hitsBefore = upstreamHits;
    for (const route of routes.filter((r) => !r.public && r.params.length > 0)) {
      const body = route.method === "GET" || route.method === "DELETE" ? undefined : {};
      const { path, got, never } = await crossTenantCase(b, route, ids, body);
      tally.add("cross-tenant 404", got.status === 404);
      expect(got.status, `${route.method} ${path}`).toBe(404);
      expect(got.text, `${route.method} ${path}`).toBe(never.text);
    }
    expect(upstreamHits).toBe(hitsBefore);
    expect((await a("GET", `/v1/agents/${ids.agt}`)).json).toMatchObject({ status: "active" });
  });
});
