import { isRecord } from "@gw/jsonrpc";
import type { MemberIdClaims } from "./member-id.ts";
import type { Member, VirtualServer } from "./members.ts";
import { routeName } from "./names.ts";
import { ERRORS, type Json, type JsonRpcId, type OwnAnswer, rpcError } from "./protocol.ts";

/**
 * MCP tasks through a virtual server (docs/mcp.md, Tasks; ADR 0045). The task id a client sees is
 * the gateway's: signed, naming the member, the member session that created the task and the
 * member's own task id (`memberIds`, kind "task"), so any replica reaches the task through that
 * session and nothing is stored. This file is the protocol side, pure: which requests are task
 * requests, and how their bodies and answers trade the gateway's ids for the member's and back.
 */

/** 2025-11-25's task methods and the 2026-07-28 tasks extension's (`tasks/update`). */
export const TASK_METHODS: ReadonlySet<string> = new Set([
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
  "tasks/update",
]);

/**
 * A task request of a virtual server: a task-augmented `tools/call` (`params.task`) routed to the
 * member that owns the tool, with the member's own name (`member`, `body`); a method naming a task
 * (`params.taskId`, checked by the forward step, which holds the key); or `tasks/list`, every member's.
 */
export type TaskPlan = {
  kind: "task";
  method: string;
  message: Json;
  /** The member serving a task-augmented tools/call; null for the `tasks/*` methods. */
  member: Member | null;
  client: string | null;
};

/** A task request's plan, or null when the request is not one (it is then planned as before). */
export function planTask(
  server: VirtualServer,
  msg: Json,
  method: string,
  client: string | null,
): TaskPlan | null {
  const params = isRecord(msg.params) ? msg.params : {};
  if (TASK_METHODS.has(method)) return { kind: "task", method, message: msg, member: null, client };
  if (method !== "tools/call" || !isRecord(params.task) || typeof params.name !== "string") return null;
  const route = routeName(server.members, params.name, "tool");
  // An unknown name is refused as any tools/call's.
  if (!route) return null;
  const message = { ...msg, params: { ...params, name: route.name } };
  return { kind: "task", method, message, member: route.member, client };
}

/** The task id a request names (`params.taskId`), as sent. */
export function namedTask(msg: Json): unknown {
  return isRecord(msg.params) ? msg.params.taskId : undefined;
}

/** The request as the member receives it: its own task id in place of the gateway's. */
export function withMemberTask(msg: Json, claims: MemberIdClaims): Json {
  const params = isRecord(msg.params) ? msg.params : {};
  return { ...msg, params: { ...params, taskId: claims.id } };
}

/** A forged, foreign or lost task id: the revision's invalid-params error, as an unknown tool's. */
export function unknownTask(id: JsonRpcId): OwnAnswer {
  return rpcError(200, id, ERRORS.invalidParams, "Invalid params: unknown task");
}

/**
 * A member's answer with the gateway's task id in place of the member's: a `CreateTaskResult`
 * (`result.task`), a task (`result` itself: tasks/get, tasks/cancel, tasks/update), a task result
 * (`_meta["io.modelcontextprotocol/related-task"]`), and every task of a `tasks/list`
 * (`result.tasks`, via `listed`). `issue` makes the gateway's id from the member's.
 */
export function withGatewayTasks(message: Json, issue: (own: string) => string): Json {
  const result = message.result;
  if (!isRecord(result)) return message;
  return { ...message, result: gatewayResult(result, issue) };
}

const RELATED_TASK = "io.modelcontextprotocol/related-task";

function gatewayResult(result: Json, issue: (own: string) => string): Json {
  let out = result;
  if (isRecord(result.task) && typeof result.task.taskId === "string")
    out = { ...out, task: { ...result.task, taskId: issue(result.task.taskId) } };
  else if (typeof result.taskId === "string") out = { ...out, taskId: issue(result.taskId) };
  const meta = isRecord(result._meta) ? result._meta : null;
  const related = meta && isRecord(meta[RELATED_TASK]) ? meta[RELATED_TASK] : null;
  if (meta && related && typeof related.taskId === "string")
    out = { ...out, _meta: { ...meta, [RELATED_TASK]: { ...related, taskId: issue(related.taskId) } } };
  return out;
}

/** The tasks of the members' `tasks/list` results, each under the gateway's id, in member order. */
export function mergedTaskList(
  id: JsonRpcId,
  pages: ReadonlyArray<{ result: Json; issue: (own: string) => string }>,
): OwnAnswer {
  const tasks: Json[] = [];
  for (const { result, issue } of pages) {
    if (!Array.isArray(result.tasks)) continue;
    for (const t of result.tasks)
      if (isRecord(t) && typeof t.taskId === "string") tasks.push({ ...t, taskId: issue(t.taskId) });
  }
  return { status: 200, message: { jsonrpc: "2.0", id, result: { tasks } } };
}
