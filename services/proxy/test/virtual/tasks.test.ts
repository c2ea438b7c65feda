// @stores once: two proxy replicas on one Postgres (an embedded store is one process's).
import { memberIdsOf } from "@gw/forward";
import { createProxyApp } from "@gw/proxy";
import {
  eventually,
  type McpV1Server,
  serveApp,
  startMcpV1Server,
  TEST_DATABASE_URL,
  type TestApp,
} from "@gw/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import { memberAgent, memberPool, rpc, stream, transact, virtualAgent } from "./fixture.ts";

// MCP tasks through a virtual server (docs/mcp.md, Tasks): an SDK 1.x member serving tasks behind
// a virtual server, the official SDK 1.x client on two proxy replicas. The task ids the client sees
// are the gateway's, signed, naming the member session that holds the task.

const SECRET = "virtual-tasks-test-session-secret-0123456789";
const FAST = { rate_limit: { rps: 100_000, burst: 100_000 } };
let gw: TestApp;
let replica: TestApp;
let call: Caller;
const pool = memberPool();
let tasker: McpV1Server;
let v: string;

beforeAll(async () => {
  if (!TEST_DATABASE_URL) return;
  gw = await startGateway({ GW_MCP_SESSION_SECRET: SECRET });
  replica = await serveApp(
    (rt) => {
      const proxy = createProxyApp(rt);
      return { ...proxy, stop: () => proxy.inflight.drain() };
    },
    { GW_MCP_SESSION_SECRET: SECRET },
    "proxy",
  );
  call = await caller(gw);
  tasker = await startMcpV1Server({ name: "alpha", mode: "stateful", tasks: true });
  const plain = await startMcpV1Server({ name: "beta", mode: "stateless" });
  pool.add(tasker);
  pool.add(plain);
  const a = await memberAgent(call, tasker.url);
  const b = await memberAgent(call, plain.url);
  v = await virtualAgent(
    call,
    [
      { agent_id: a, prefix: "a" },
      { agent_id: b, prefix: "b" },
    ],
    FAST,
  );
});
afterAll(async () => {
  await pool.closeAll();
  await replica?.close();
  await gw?.close();
});

async function connect(app: TestApp, who: Caller = call, agent = v): Promise<Client> {
  const client = new Client({ name: "sdk1", version: "1.0.0" });
  const url = new URL(`${app.url}/v1/proxy/${agent}/stream`);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { Authorization: `Bearer ${who.token}` } },
    }),
  );
  return client;
}

function work(client: Client, text: string, hold = false) {
  return client.request(
    { method: "tools/call", params: { name: "a__work", arguments: { text, hold }, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
}

async function invalidParams(p: Promise<unknown>): Promise<void> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(McpError);
  expect((e as McpError).code).toBe(-32602);
}

describe.skipIf(!TEST_DATABASE_URL)("virtual MCP server: tasks", () => {
  it("creates a task through one replica; polls, fetches and cancels through either", async () => {
    const a = await connect(gw);
    const b = await connect(replica);
    // The merged capabilities include the member's tasks.
    expect(a.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {} });
    const created = await work(a, "x");
    const { taskId } = created.task;
    expect(taskId.startsWith("gw1.")).toBe(true);
    for (const client of [a, b]) {
      const got = await client.experimental.tasks.getTask(taskId);
      expect(got).toMatchObject({ taskId, status: "completed" });
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.content).toEqual([{ type: "text", text: "alpha:work:x" }]);
    }
    // A task that keeps working, cancelled through the other replica.
    const held = await work(a, "h", true);
    expect(held.task.status).toBe("working");
    const cancelled = await b.experimental.tasks.cancelTask(held.task.taskId);
    expect(cancelled).toMatchObject({ taskId: held.task.taskId, status: "cancelled" });
    expect((await a.experimental.tasks.getTask(held.task.taskId)).status).toBe("cancelled");
    // tasks/list merges the members' lists, under the gateway's ids.
    const listed = (await a.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    expect(listed).toEqual(expect.arrayContaining([taskId, held.task.taskId]));
    // The record holds the gateway's id, as a plain agent's holds the member's: the task's history.
    const rows = await eventually(async () => {
      const res = await call("GET", `/v1/invocations?mcp_task_id=${encodeURIComponent(taskId)}`);
      const data = res.json.data as Array<{ mcp_method: string; mcp_task_status: string | null }>;
      return data.length === 5 ? data : undefined;
    });
    expect(rows.map((r) => r.mcp_method)).toEqual([
      "tools/call",
      "tasks/get",
      "tasks/result",
      "tasks/get",
      "tasks/result",
    ]);
    expect(rows[1]?.mcp_task_status).toBe("completed");
    await a.close();
    await b.close();
  });

  it("routes a task to the member session its id names (the member's own id, that session)", async () => {
    const client = await connect(replica);
    const { task } = await work(client, "s");
    const ids = memberIdsOf({ GW_MCP_SESSION_SECRET: SECRET });
    const claims = ids.verify("task", task.taskId, call.tenant, v);
    expect(claims?.memberSession).not.toBe("");
    const before = tasker.requests.length;
    await client.experimental.tasks.getTask(task.taskId);
    const seen = tasker.requests.slice(before).filter((r) => r.rpcMethod === "tasks/get");
    expect(seen.map((r) => r.headers["mcp-session-id"])).toEqual([claims?.memberSession]);
    // The same member and task id under another member session: that session has no such task.
    const elsewhere = ids.issue({
      ...(claims as NonNullable<typeof claims>),
      memberSession: "no-such-session",
    });
    await invalidParams(client.experimental.tasks.getTask(elsewhere));
    // The member drops its sessions: their tasks are unknown; a new task is made on a new session.
    await tasker.expireSessions();
    await invalidParams(client.experimental.tasks.getTask(task.taskId));
    const renewed = await work(client, "r");
    expect(ids.verify("task", renewed.task.taskId, call.tenant, v)?.memberSession).not.toBe(
      claims?.memberSession,
    );
    expect((await client.experimental.tasks.getTask(renewed.task.taskId)).status).toBe("completed");
    await client.close();
  });

  it("a forged, malformed or foreign task id is invalid params; nothing reaches a member", async () => {
    const client = await connect(gw);
    const { task } = await work(client, "f");
    const [payload, sig] = task.taskId.slice(4).split(".");
    const before = tasker.requests.length;
    const forged = [
      `gw1.${payload}.${(sig ?? "").replace(/^./, (c) => (c === "A" ? "B" : "A"))}`,
      "plain-task-id",
      `gw1.${"x".repeat(3000)}.y`,
      "",
    ];
    for (const id of forged) {
      await invalidParams(client.experimental.tasks.getTask(id));
      await invalidParams(client.experimental.tasks.cancelTask(id));
    }
    await invalidParams(client.request({ method: "tasks/get", params: { taskId: 7 } }, CallToolResultSchema));
    expect(tasker.requests.slice(before).filter((r) => r.rpcMethod?.startsWith("tasks/"))).toEqual([]);
    await client.close();

    // Another tenant's virtual server over the same member: the first tenant's id is unknown there.
    const other = await caller(gw);
    const m = await memberAgent(other, tasker.url);
    const ov = await virtualAgent(other, [{ agent_id: m, prefix: "a" }], FAST);
    const foreign = await connect(gw, other, ov);
    await invalidParams(foreign.experimental.tasks.getTask(task.taskId));
    await foreign.close();
  });

  it("serves 2026-07-28 requests too: Mcp-Name is the gateway's task id; streaming and transactional", async () => {
    const created = await stream(
      call,
      v,
      rpc("tools/call", { name: "a__work", arguments: { text: "n" }, task: { ttl: 60_000 } }),
    );
    expect(created.status).toBe(200);
    const taskId = created.json.result.task.taskId as string;
    expect(taskId.startsWith("gw1.")).toBe(true);
    const get = rpc("tasks/get", { taskId });
    get.headers["mcp-name"] = taskId;
    const got = await stream(call, v, get);
    expect(got.json.result).toMatchObject({ taskId, status: "completed" });
    const polled = await transact(call, v, get);
    expect(polled.body.result).toMatchObject({ taskId, status: "completed" });
    // A forged id: invalid params, as the revision answers an unknown name.
    const forged = rpc("tasks/get", { taskId: "gw1.forged.id" });
    forged.headers["mcp-name"] = "gw1.forged.id";
    const refused = await stream(call, v, forged);
    expect(refused.json.error.code).toBe(-32602);
  });
});
