// @stores once: 405 answers of the router.
import { fillPath, openApiRoutes, type TestApp } from "@gw/testkit";
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

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/**
 * Every path of the served document, filled (each id parameter with an id of the prefix its
 * pattern names, one that nobody has; a tool name with a word), with the methods served on that
 * URL: those the document lists for every path the URL matches. `/v1/agents/{id}/tools/pin` is
 * also `/v1/agents/{id}/tools/{name}` for the tool named "pin", so GET is served there too.
 */
async function documentedPaths(): Promise<Array<[path: string, url: string, methods: Set<string>]>> {
  const routes = await openApiRoutes(gw.url);
  const matches = (path: string, url: string) =>
    new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(url);
  const urls = new Map<string, string>();
  for (const route of routes) {
    const ids = Object.fromEntries(
      route.params.map((p) => [
        p.prefix ?? "",
        p.prefix ? `${p.prefix}_01890000-0000-7000-8000-000000000000` : "some_tool",
      ]),
    );
    urls.set(route.path, fillPath(route, ids));
  }
  return [...urls].map(([path, url]) => [
    path,
    url,
    new Set(routes.filter((r) => matches(r.path, url)).map((r) => r.method)),
  ]);
}

describe("405 with Allow", () => {
  it("every path of GET /openapi.json: each method it does not list is 405 with an Allow that lists exactly those it does", async () => {
    const paths = await documentedPaths();
    // The sweep reaches the routes added after the first list (approvals, tools, analytics, ...).
    expect(paths.map(([p]) => p)).toEqual(
      expect.arrayContaining([
        "/v1/approvals",
        "/v1/approvals/{id}",
        "/v1/analytics/summary",
        "/v1/proxy/{id}/stream",
      ]),
    );
    const wrong: unknown[] = [];
    let refused = 0;
    for (const [path, url, listed] of paths) {
      for (const method of METHODS.filter((m) => !listed.has(m))) {
        const res = await call(method, url);
        refused++;
        const allow = res.headers.get("allow") ?? "";
        const allowed = new Set(allow.split(", ").filter(Boolean));
        // HEAD accompanies GET where a HEAD is served like GET (the Hono routes); nowhere else.
        const served = new Set(allowed);
        if (served.has("HEAD")) {
          if (!listed.has("GET")) wrong.push([method, path, "HEAD without GET", allow]);
          served.delete("HEAD");
        }
        const same = served.size === listed.size && [...listed].every((m) => served.has(m));
        if (res.status !== 405 || !same || res.json?.error !== `method not allowed; use ${allow}`) {
          wrong.push([method, path, res.status, allow, res.text]);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(refused).toBeGreaterThan(paths.length);
  });

  it("HEAD is in Allow exactly where a HEAD request is served", async () => {
    const wrong: unknown[] = [];
    for (const [path, url, listed] of await documentedPaths()) {
      const other = METHODS.find((m) => !listed.has(m));
      if (!other) continue;
      const allow = (await call(other, url)).headers.get("allow") ?? "";
      const head = await call("HEAD", url);
      const headServed = head.status !== 405;
      if (allow.split(", ").includes("HEAD") !== headServed) wrong.push([path, allow, head.status]);
      if (!headServed && head.headers.get("allow") !== allow)
        wrong.push([path, "HEAD's Allow", head.headers.get("allow")]);
    }
    expect(wrong).toEqual([]);
  });

  it("a path served outside the document (the console), and OPTIONS on a known path: 405 with Allow too", async () => {
    for (const [method, path, allow] of [
      ["PUT", "/console/", "GET, HEAD"],
      ["POST", "/console/", "GET, HEAD"],
      ["OPTIONS", "/v1/agents", "GET, HEAD, POST"],
      ["OPTIONS", "/v1/proxy/agt_01890000-0000-7000-8000-000000000000/invocations/inv_x", "GET, HEAD"],
    ] as const) {
      const res = await call(method, path);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      expect(res.json).toEqual({ error: `method not allowed; use ${allow}` });
    }
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
