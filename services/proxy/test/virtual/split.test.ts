// @stores once: Postgres and Redis only: the split deployment.
import { randomUUID } from "node:crypto";
import { loadConfig } from "@gw/config";
import { createControlPlaneApp } from "@gw/control-plane";
import { createProxyApp } from "@gw/proxy";
import { createRuntime } from "@gw/runtime";
import {
  client,
  newTenant,
  serveApp,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  type TestApp,
  testEnv,
  token,
} from "@gw/testkit";
import { startWorker } from "@gw/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Caller } from "../helpers.ts";
import { connectV2, memberAgent, memberPool, rpc, transact, virtualAgent } from "./fixture.ts";

// The split deployment: control plane, proxy and worker as separate runtimes sharing Postgres and
// Redis. A virtual server's members are read by the proxy (streaming) and the worker
// (transactional) from the shared store.

const env = { GW_QUEUE_NAME: `virtual-split-${randomUUID()}` };
const pool = memberPool();
const stops: Array<() => Promise<unknown>> = [];
let cp: TestApp;
let proxy: TestApp;

beforeAll(async () => {
  if (!TEST_DATABASE_URL || !TEST_REDIS_URL) return;
  cp = await serveApp(createControlPlaneApp, env, "control-plane");
  proxy = await serveApp(
    (rt) => {
      const p = createProxyApp(rt);
      return { ...p, stop: () => p.inflight.drain() };
    },
    env,
    "proxy",
  );
  const rt = await createRuntime(
    loadConfig(testEnv({ ...env, GW_LOG_LEVEL: "silent" }), { defaultPort: 0 }),
    {
      service: "worker",
      migrate: false,
    },
  );
  const w = startWorker(rt);
  stops.push(
    () => cp.close(),
    () => proxy.close(),
    async () => {
      await w.stop();
      await rt.close();
    },
  );
});
afterAll(async () => {
  await pool.closeAll();
  await Promise.allSettled(stops.map((s) => s()));
});

describe.skipIf(!TEST_DATABASE_URL || !TEST_REDIS_URL)("virtual MCP server: split deployment", () => {
  it("serves a virtual server on both paths across control plane, proxy and worker", async () => {
    const bearer = await token(newTenant());
    const onCp = Object.assign(client(cp.url, bearer), { tenant: "", token: bearer }) as Caller;
    const onProxy = Object.assign(client(proxy.url, bearer), { tenant: "", token: bearer }) as Caller;
    const alpha = await pool.v2("alpha");
    const beta = await pool.v2("beta");
    const a = await memberAgent(onCp, alpha.url);
    const b = await memberAgent(onCp, beta.url);
    const v = await virtualAgent(onCp, [
      { agent_id: a, prefix: "a" },
      { agent_id: b, prefix: "b" },
    ]);
    const c = await connectV2(proxy, onProxy, v);
    pool.add(c);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual([
      "a__echo",
      "a__add",
      "b__echo",
      "b__add",
    ]);
    expect((await c.callTool({ name: "b__add", arguments: { text: "1" } })).content).toEqual([
      { type: "text", text: "beta:add:1" },
    ]);
    // Transactional: accepted by the proxy, run by the worker, polled from the proxy.
    const t = await transact(onProxy, v, rpc("tools/call", { name: "a__echo", arguments: { text: "w" } }));
    expect(t.body.result.content).toEqual([{ type: "text", text: "alpha:echo:w" }]);
    expect(t.polled?.json).toMatchObject({ routed_agent_id: a, status: "succeeded" });
    const listed = await transact(onProxy, v, rpc("tools/list"));
    expect(listed.body.result.tools).toHaveLength(4);
  });

  it("omits a tool the tenant's policy denies from the merged list on both paths, by its exposed name", async () => {
    const bearer = await token(newTenant());
    const onCp = Object.assign(client(cp.url, bearer), { tenant: "", token: bearer }) as Caller;
    const onProxy = Object.assign(client(proxy.url, bearer), { tenant: "", token: bearer }) as Caller;
    const alpha = await pool.v2("alpha");
    const beta = await pool.v2("beta");
    const a = await memberAgent(onCp, alpha.url);
    const b = await memberAgent(onCp, beta.url);
    const v = await virtualAgent(onCp, [
      { agent_id: a, prefix: "a" },
      { agent_id: b, prefix: "b" },
    ]);
    // Written on the control plane; read by the proxy (streaming) and the worker (transactional).
    const policy = await onCp("PUT", "/v1/policy", {
      rules: [{ action: "deny", match: { tools: ["b__add"] } }],
    });
    expect(policy.status).toBe(200);
    const c = await connectV2(proxy, onProxy, v);
    pool.add(c);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(["a__echo", "a__add", "b__echo"]);
    const listed = await transact(onProxy, v, rpc("tools/list"));
    expect(listed.polled?.json.status).toBe("succeeded");
    expect(listed.body.result.tools.map((t: { name: string }) => t.name)).toEqual([
      "a__echo",
      "a__add",
      "b__echo",
    ]);
    // The member's own name is not what the rule names: `add` of alpha stays listed above, and
    // the denied tool is refused when called, not only hidden.
    await expect(c.callTool({ name: "b__add", arguments: { text: "1" } })).rejects.toThrow(/403|denied/);
  });
});
