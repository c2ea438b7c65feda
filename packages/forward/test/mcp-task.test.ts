import { describe, expect, it } from "vitest";
import { mcpTaskLearner } from "../src/protocols/mcp-task.ts";

const JSON_HEAD = { status: 200, headers: { "content-type": "application/json" } };
const SSE_HEAD = { status: 200, headers: { "content-type": "text/event-stream" } };
const msg = (result: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 1, result });

function learn(head: typeof JSON_HEAD, method: string, ...chunks: string[]) {
  const learner = mcpTaskLearner(head, method);
  for (const c of chunks) learner?.add(Buffer.from(c));
  return learner?.facts();
}

describe("the MCP task learner", () => {
  it("learns the task a task-augmented tools/call created, and the status of task answers", () => {
    const created = msg({ task: { taskId: "t-1", status: "working" } });
    expect(learn(JSON_HEAD, "tools/call", created.slice(0, 10), created.slice(10))).toEqual({
      mcpTaskId: "t-1",
      mcpTaskStatus: "working",
    });
    expect(learn(JSON_HEAD, "tasks/get", msg({ taskId: "t-1", status: "completed" }))).toEqual({
      mcpTaskId: "t-1",
      mcpTaskStatus: "completed",
    });
    const related = { _meta: { "io.modelcontextprotocol/related-task": { taskId: "t-1" } }, content: [] };
    expect(learn(JSON_HEAD, "tasks/result", msg(related))).toEqual({ mcpTaskId: "t-1" });
    // SSE: a notification, then the response, cut anywhere.
    const events = `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\ndata: ${msg({ taskId: "t-2", status: "cancelled" })}\n\n`;
    expect(learn(SSE_HEAD, "tasks/cancel", events.slice(0, 33), events.slice(33))).toEqual({
      mcpTaskId: "t-2",
      mcpTaskStatus: "cancelled",
    });
  });

  it("learns nothing from other methods, failures, large tool results or values the record cannot hold", () => {
    expect(mcpTaskLearner(JSON_HEAD, "tools/list")).toBeNull();
    expect(mcpTaskLearner(JSON_HEAD, "tasks/list")).toBeNull();
    expect(mcpTaskLearner(JSON_HEAD, null)).toBeNull();
    expect(mcpTaskLearner({ ...JSON_HEAD, status: 500 }, "tasks/get")).toBeNull();
    const big = msg({ content: [{ type: "text", text: "x".repeat(20_000) }], task: { taskId: "t" } });
    expect(learn(JSON_HEAD, "tools/call", big)).toEqual({});
    expect(learn(JSON_HEAD, "tasks/get", msg({ taskId: "a".repeat(1100), status: "s\u0000" }))).toEqual({});
    expect(learn(JSON_HEAD, "tasks/get", "not json")).toEqual({});
    expect(learn(JSON_HEAD, "tools/call", msg({ content: [] }))).toEqual({});
  });
});
