import { isEventStream, isRecord, type JsonObject } from "@gw/jsonrpc";
import { MCP_TASK_ID_MAX_BYTES } from "@gw/mcp";
import type { AnswerHead, AnswerLearner } from "./protocol.ts";
import { ResultLearner } from "./result-learner.ts";

/**
 * What an MCP answer tells the record of a task (docs/mcp.md, Tasks): the task's id (the first
 * seen) and the last task status it carried. Read from the JSON-RPC result of a JSON answer or of
 * each event of an SSE answer: a task-augmented `tools/call`'s `CreateTaskResult` (`{task}`), a
 * `tasks/get`, `tasks/cancel` or `tasks/update` result (the task itself, or `{task}`), and a
 * `tasks/result` result (the task named in `_meta["io.modelcontextprotocol/related-task"]`).
 */
export type LearnedMcpTask = { mcpTaskId?: string; mcpTaskStatus?: string };

/** The methods whose answers name a task; `tasks/list` names many and teaches nothing. */
const TASK_ANSWERS: ReadonlySet<string> = new Set([
  "tools/call",
  "tasks/get",
  "tasks/result",
  "tasks/update",
  "tasks/cancel",
]);
const RELATED_TASK = "io.modelcontextprotocol/related-task";
/**
 * A `tools/call` answer (or event) larger than this is a tool's result, not the small
 * `CreateTaskResult`: it is not kept, so an ordinary tool call costs the learner next to nothing.
 */
const CALL_MAX_BYTES = 16 * 1024;
/** A task method's answer is read up to this size (a `tasks/result` carries the tool's result). */
const TASK_MAX_BYTES = 1024 * 1024;
/** Bounds the learned id and status: longer values are not recorded (the filter's bound, MCP_TASK_ID_MAX_BYTES). */
const MAX_VALUE_BYTES = MCP_TASK_ID_MAX_BYTES;

/**
 * Learns from an MCP answer as it passes, chunk by chunk, after each chunk was delivered: it never
 * holds the answer back (`AnswerLearner`, as A2A's). Null for methods that name no task and for
 * unsuccessful answers.
 */
export function mcpTaskLearner(head: AnswerHead, method: string | null): AnswerLearner | null {
  if (method === null || !TASK_ANSWERS.has(method)) return null;
  if (head.status < 200 || head.status >= 300) return null;
  const type = head.headers["content-type"];
  const stream = isEventStream(typeof type === "string" ? type : null);
  const max = method === "tools/call" ? CALL_MAX_BYTES : TASK_MAX_BYTES;
  return new ResultLearner<LearnedMcpTask>({ stream, maxJson: max, maxEvent: max }, {}, learnMcpTask);
}

/** Learns from one JSON-RPC result of an MCP task method (any revision); unknown shapes teach nothing. */
export function learnMcpTask(result: unknown, into: LearnedMcpTask): void {
  if (!isRecord(result)) return;
  const task: JsonObject | null = isRecord(result.task)
    ? result.task
    : typeof result.taskId === "string"
      ? result
      : null;
  if (task) {
    const id = bounded(task.taskId);
    if (id !== null && into.mcpTaskId === undefined) into.mcpTaskId = id;
    const status = bounded(task.status);
    if (status !== null) into.mcpTaskStatus = status;
    return;
  }
  const meta = isRecord(result._meta) ? result._meta : null;
  const related = meta && isRecord(meta[RELATED_TASK]) ? meta[RELATED_TASK] : null;
  const id = related ? bounded(related.taskId) : null;
  if (id !== null && into.mcpTaskId === undefined) into.mcpTaskId = id;
}

function bounded(v: unknown): string | null {
  if (typeof v !== "string" || v === "" || Buffer.byteLength(v) > MAX_VALUE_BYTES) return null;
  // The record is Postgres text: no NUL, no lone surrogate.
  return v.includes("\u0000") || /\p{Surrogate}/u.test(v) ? null : v;
}
