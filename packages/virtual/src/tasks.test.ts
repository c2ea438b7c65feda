import { describe, expect, it } from "vitest";
import type { Member, VirtualServer } from "./members.ts";
import { planRequest } from "./plan.ts";
import { mergedTaskList, planTask, withGatewayTasks, withMemberTask } from "./tasks.ts";

const member = { agentId: "agt_m", prefix: "a" } as unknown as Member;
const server = { name: "v", version: "1", members: [member], discovery: "list" } as unknown as VirtualServer;
const issue = (own: string) => `gw:${own}`;
const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };

describe("virtual server tasks", () => {
  it("plans task-augmented tools/call (the member's own name) and every tasks/* method", () => {
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "a__w", task: { ttl: 5 } } };
    expect(planTask(server, call, "tools/call", null)).toMatchObject({
      kind: "task",
      member,
      message: { params: { name: "w", task: { ttl: 5 } } },
    });
    // Not task-augmented, or an unknown tool: planned as before.
    expect(planTask(server, { ...call, params: { name: "a__w" } }, "tools/call", null)).toBeNull();
    expect(planTask(server, { ...call, params: { name: "zz", task: {} } }, "tools/call", null)).toBeNull();
    for (const m of ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"]) {
      const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 2, method: m, params: { _meta: META } }));
      expect(planRequest(server, body, { protocolVersion: "2026-07-28" })).toMatchObject({
        kind: "task",
        method: m,
      });
    }
  });

  it("trades the gateway's task ids for the member's and back, in every answer shape", () => {
    const claims = {
      kind: "task",
      tenantId: "t",
      agentId: "v",
      member: "m",
      memberSession: "",
      id: "own",
    } as const;
    expect(withMemberTask({ method: "tasks/get", params: { taskId: "gw", x: 1 } }, claims).params).toEqual({
      taskId: "own",
      x: 1,
    });
    const created = withGatewayTasks(
      { jsonrpc: "2.0", id: 1, result: { task: { taskId: "t1", status: "working" } } },
      issue,
    );
    expect(created.result).toEqual({ task: { taskId: "gw:t1", status: "working" } });
    expect(withGatewayTasks({ id: 1, result: { taskId: "t2", status: "completed" } }, issue).result).toEqual({
      taskId: "gw:t2",
      status: "completed",
    });
    const related = { "io.modelcontextprotocol/related-task": { taskId: "t3" }, other: 1 };
    expect(withGatewayTasks({ id: 1, result: { content: [], _meta: related } }, issue).result).toEqual({
      content: [],
      _meta: { "io.modelcontextprotocol/related-task": { taskId: "gw:t3" }, other: 1 },
    });
    // An error, or a result naming no task: unchanged.
    const error = { id: 1, error: { code: -32602, message: "x" } };
    expect(withGatewayTasks(error, issue)).toBe(error);
    expect(withGatewayTasks({ id: 1, result: { content: [] } }, issue).result).toEqual({ content: [] });
  });

  it("merges the members' task lists under gateway ids, skipping what is not a task", () => {
    const merged = mergedTaskList(3, [
      { result: { tasks: [{ taskId: "a", status: "working" }, { nope: 1 }, 7] }, issue },
      { result: { tasks: "not a list" }, issue },
      { result: { tasks: [{ taskId: "b", status: "completed" }] }, issue: (o) => `other:${o}` },
    ]);
    expect(merged.message).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: {
        tasks: [
          { taskId: "gw:a", status: "working" },
          { taskId: "other:b", status: "completed" },
        ],
      },
    });
  });
});
