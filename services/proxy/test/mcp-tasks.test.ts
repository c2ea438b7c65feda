// @stores both: the recorded task fields are read back through the store.
import { caller, eventually, type McpV1Server, startMcpV1Server, type TestApp } from "@gw/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createAgent, pollDone, recordDone, startGateway } from "./helpers.ts";

// MCP tasks (2025-11-25) through a plain MCP agent (docs/mcp.md, Tasks): the calls pass as any
// call; each invocation records the task it created or named and the last status its answer
// carried, and the list filters on the task.

let gw: TestApp;
let call: Caller;
let member: McpV1Server;
let agent: string;

beforeAll(async () => {
  gw = await startGateway();
  call = await caller(gw);
  member = await startMcpV1Server({ name: "tasker", mode: "stateful", tasks: true });
  agent = await createAgent(call, {
    name: "tasker",
    upstream_url: member.url,
    protocol: "mcp",
    rate_limit: { rps: 100_000, burst: 100_000 },
  });
});
afterAll(async () => {
  await member?.close();
  await gw?.close();
});

async function connect(who: Caller = call, id = agent): Promise<Client> {
  const client = new Client({ name: "sdk1", version: "1.0.0" });
  const url = new URL(`${gw.url}/v1/proxy/${id}/stream`);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { Authorization: `Bearer ${who.token}` } },
    }),
  );
  return client;
}

type Row = { mcp_method: string; mcp_task_id: string | null; mcp_task_status: string | null };

async function rowsOf(taskId: string, who: Caller = call): Promise<Row[]> {
  const res = await who("GET", `/v1/invocations?mcp_task_id=${encodeURIComponent(taskId)}`);
  expect(res.status).toBe(200);
  return res.json.data as Row[];
}

describe("MCP tasks through a plain agent", () => {
  it("records the task id and status of a task's calls, filterable by mcp_task_id, oldest first", async () => {
    const client = await connect();
    expect(client.getServerCapabilities()?.tasks).toBeDefined();
    const created = await client.request(
      { method: "tools/call", params: { name: "work", arguments: { text: "x" }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const got = await client.experimental.tasks.getTask(taskId);
    expect(got.status).toBe("completed");
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result).toMatchObject({ content: [{ type: "text", text: "tasker:work:x" }] });
    const rows = await eventually(async () => {
      const r = await rowsOf(taskId);
      return r.length === 3 ? r : undefined;
    });
    // Oldest first: the history of the task.
    expect(rows.map((r) => r.mcp_method)).toEqual(["tools/call", "tasks/get", "tasks/result"]);
    expect(rows.every((r) => r.mcp_task_id === taskId)).toBe(true);
    expect(rows[0]?.mcp_task_status).toBe(created.task.status);
    expect(rows[1]?.mcp_task_status).toBe("completed");

    // A held task, cancelled: the cancel's answer records the cancelled status.
    const held = await client.request(
      {
        method: "tools/call",
        params: { name: "work", arguments: { text: "h", hold: true }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const cancelled = await client.experimental.tasks.cancelTask(held.task.taskId);
    expect(cancelled.status).toBe("cancelled");
    const heldRows = await eventually(async () => {
      const r = await rowsOf(held.task.taskId);
      return r.length === 2 && r[1]?.mcp_task_status ? r : undefined;
    });
    expect(heldRows.map((r) => [r.mcp_method, r.mcp_task_status])).toEqual([
      ["tools/call", "working"],
      ["tasks/cancel", "cancelled"],
    ]);
    // An ordinary tool call records no task.
    await client.callTool({ name: "echo", arguments: { text: "plain" } });
    const echo = await eventually(async () => {
      const res = await call("GET", "/v1/invocations?tool=echo");
      return (res.json.data as Row[])[0];
    });
    expect(echo).toMatchObject({ mcp_task_id: null, mcp_task_status: null });
    await client.close();

    // Another tenant sees none of them.
    const other = await caller(gw);
    expect(await rowsOf(taskId, other)).toEqual([]);
  });

  it("records a task call made through the transactional path (the stored answer read as it is stored)", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/proxy/${agent}/stream`), {
      requestInit: { headers: { Authorization: `Bearer ${call.token}` } },
    });
    const client = new Client({ name: "sdk1", version: "1.0.0" });
    await client.connect(transport);
    const created = await client.request(
      { method: "tools/call", params: { name: "work", arguments: { text: "t" }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const accepted = await call(
      "POST",
      `/v1/proxy/${agent}`,
      { jsonrpc: "2.0", id: 9, method: "tasks/get", params: { taskId } },
      {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        "mcp-session-id": transport.sessionId as string,
      },
    );
    expect(accepted.status).toBe(202);
    const done = await pollDone(call, agent, accepted.json.invocation_id);
    expect(done.json.status).toBe("succeeded");
    const record = await recordDone(call, accepted.json.invocation_id);
    expect(record.json).toMatchObject({
      mcp_method: "tasks/get",
      mcp_task_id: taskId,
      mcp_task_status: "completed",
    });
    await client.close();
  });

  it("refuses bad mcp_task_id filters with 400; an unknown task id lists nothing", async () => {
    for (const bad of ["a".repeat(1025), "a%00b"]) {
      const res = await call("GET", `/v1/invocations?mcp_task_id=${bad}`);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(/mcp_task_id/);
    }
    expect(await rowsOf("no-such-task")).toEqual([]);
  });

  it("a task id the record cannot hold is forwarded and answered, recorded without it", async () => {
    const client = await connect();
    const long = "t".repeat(1100);
    await expect(client.experimental.tasks.getTask(long)).rejects.toThrow();
    await expect(client.experimental.tasks.getTask("nul\u0000id")).rejects.toThrow();
    const unnamed = await eventually(async () => {
      const res = await call("GET", "/v1/invocations?method=tasks%2Fget&limit=100");
      const rows = (res.json.data as Row[]).filter((r) => r.mcp_task_id === null);
      return rows.length >= 2 ? rows : undefined;
    });
    expect(unnamed.every((r) => r.mcp_task_status === null)).toBe(true);
    await client.close();
  });

  it("policy methods and conditions match the task methods", async () => {
    const tenant = await caller(gw);
    const id = await createAgent(tenant, { name: "tasker", upstream_url: member.url, protocol: "mcp" });
    const policy = await tenant("PUT", "/v1/policy", {
      rules: [
        { action: "deny", match: { methods: ["tasks/cancel"] } },
        { action: "deny", when: 'call.method == "tasks/list"' },
      ],
    });
    expect(policy.status).toBe(200);
    const client = await connect(tenant, id);
    const held = await client.request(
      {
        method: "tools/call",
        params: { name: "work", arguments: { text: "p", hold: true }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const { taskId } = held.task;
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe("working");
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/403|denied/);
    await expect(client.experimental.tasks.listTasks()).rejects.toThrow(/403|denied/);
    // The denied cancel went nowhere: the task still works.
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe("working");
    await client.close();
  });
});
