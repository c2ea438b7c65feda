// @stores both: query parameters become SQL filters.
import type { TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, startGateway, upstreamPool } from "./helpers.ts";

// Query parameters (docs/interface.md, Conventions): a route takes the parameters it documents and
// no other; each is single-valued. The proxy family's query is not the gateway's and stays unread.

const pool = upstreamPool();
let app: TestApp;
let a: Caller;
let agent: string;
let upstreamPaths: string[] = [];

beforeAll(async () => {
  app = await startGateway();
  a = await caller(app, ["approvals:decide"]);
  const up = await pool.up((req, res) => {
    upstreamPaths.push(req.url ?? "");
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  agent = await createAgent(a, { upstream_url: `${up.url}/run?key=upstream` });
});
afterAll(async () => {
  await pool.closeAll();
  await app?.close();
});

/** A week ago: inside the analytics window (at most 31 days) whatever day the suite runs. */
const WEEK_AGO = new Date(Date.now() - 7 * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");

/** Every list and read route that takes a query: a documented query that works, and one parameter of it. */
const LISTS: { path: string; ok: string; param: string }[] = [
  { path: "/v1/agents", ok: "protocol=mcp&limit=5&offset=0", param: "protocol" },
  {
    path: "/v1/invocations",
    ok: "status=failed&mode=streaming&settlement=pending&policy=warn&agent_id=x&method=tools/call&tool=search&since=2026-01-01T00:00:00Z&until=2027-01-01T00:00:00Z&limit=5&offset=0",
    param: "status",
  },
  {
    path: "/v1/policy/decisions",
    ok: "action=deny&agent_id=x&since=2026-01-01T00:00:00Z&limit=5",
    param: "action",
  },
  { path: "/v1/approvals", ok: "status=pending&agent_id=x&limit=5&offset=0", param: "status" },
  { path: "/v1/analytics", ok: `bucket=day&since=${WEEK_AGO}&agent_id=AGENT`, param: "bucket" },
  { path: "/v1/analytics/summary", ok: `since=${WEEK_AGO}`, param: "since" },
  { path: "/v1/credentials", ok: "limit=5&offset=0", param: "limit" },
];

describe("query parameters of the control plane", () => {
  it("an unknown parameter is a 400 naming it, on every list route; the documented ones still work", async () => {
    const lists = [
      ...LISTS,
      { path: "/v1/agent-events/summary", ok: `agent_id=${agent}`, param: "agent_id" },
    ];
    for (const { path, ok: raw } of lists) {
      const ok = raw.replace("AGENT", agent);
      const good = await a("GET", `${path}?${ok}`);
      expect(good.status, `${path}?${ok}: ${good.text}`).toBe(200);
      const bad = await a("GET", `${path}?${ok}&colour=red`);
      expect(bad.status, path).toBe(400);
      expect(bad.json.error, path).toMatch(/^unknown query parameter "colour"; this route takes /);
    }
  });

  it("a parameter given twice is a 400 naming it, never one value silently applied", async () => {
    for (const { path, ok: raw, param } of LISTS) {
      const ok = raw.replace("AGENT", agent);
      const value = new URLSearchParams(ok).get(param);
      const res = await a("GET", `${path}?${ok}&${param}=${encodeURIComponent(value ?? "")}`);
      expect(res.status, path).toBe(400);
      expect(res.json).toEqual({ error: `query parameter "${param}" given more than once` });
    }
    const twice = await a("GET", "/v1/invocations?status=failed&status=succeeded");
    expect(twice.json).toEqual({ error: 'query parameter "status" given more than once' });
    // Even an empty value counts as given.
    expect((await a("GET", "/v1/agents?limit=&limit=5")).status).toBe(400);
  });

  it("the invocation list's agent filter stays unvalidated: an unknown agent matches nothing", async () => {
    const res = await a("GET", "/v1/invocations?agent_id=not-an-agent");
    expect(res.status).toBe(200);
    expect(res.json.total).toBe(0);
  });

  it("routes that take no query refuse every parameter", async () => {
    const res = await a("GET", "/v1/agents?status=inactive");
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('unknown query parameter "status"; this route takes limit, offset, protocol');
    for (const path of [
      `/v1/agents/${agent}`,
      `/v1/agents/${agent}/tools`,
      `/v1/agents/${agent}/tools/search`,
      "/v1/me",
      "/v1/capabilities",
      "/v1/policy",
      "/v1/receipts/jwks",
    ]) {
      const r = await a("GET", `${path}?status=drifted`);
      expect(r.status, path).toBe(400);
      expect(r.json, path).toEqual({ error: 'unknown query parameter "status"; this route takes none' });
    }
    // Writes too, before anything is written.
    const write = await a("POST", "/v1/agents?dry_run=1", { name: "never" });
    expect(write.status).toBe(400);
    const names = (await a("GET", "/v1/agents?limit=100")).json.data.map((x: { name: string }) => x.name);
    expect(names).not.toContain("never");
    // A name that is no plain identifier is described, not echoed.
    const odd = await a("GET", `/v1/agents/${agent}?${encodeURIComponent("<b>x</b>")}=1`);
    expect(odd.status).toBe(400);
    expect(odd.json.error).toBe(
      "unknown query parameter with a name this route does not take; this route takes none",
    );
  });

  it("a 401 comes before the query is looked at; unknown paths stay 404 and 405", async () => {
    const anon = await fetch(`${app.url}/v1/agents?colour=red`);
    expect(anon.status).toBe(401);
    expect(await anon.text()).toBe("");
    expect((await a("GET", "/v1/nothing-here?colour=red")).status).toBe(404);
    expect((await a("PUT", "/v1/agents?colour=red", {})).status).toBe(405);
  });

  it("a proxy call's query is neither checked nor forwarded: the upstream URL's own query is used", async () => {
    upstreamPaths = [];
    const stream = await a("POST", `/v1/proxy/${agent}/stream?colour=red&colour=blue`, { q: 1 });
    expect(stream.status).toBe(200);
    const accepted = await a("POST", `/v1/proxy/${agent}?colour=red`, { q: 2 });
    expect(accepted.status).toBe(202);
    const done = await a("GET", `/v1/proxy/${agent}/invocations/${accepted.json.invocation_id}`);
    expect(done.status).toBe(200);
    await pollDone(a, agent, accepted.json.invocation_id);
    expect(upstreamPaths).toEqual(["/run?key=upstream", "/run?key=upstream"]);
  });
});
