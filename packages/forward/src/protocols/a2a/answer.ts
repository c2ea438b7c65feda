import { isEventStream, isRecord, type JsonObject } from "@gw/jsonrpc";
import type { AnswerHead } from "../protocol.ts";
import { ResultLearner } from "../result-learner.ts";
import { type Needles, needles } from "../sse-data.ts";
import { idOf } from "./request.ts";

/**
 * What an A2A answer tells the record (docs/a2a.md): the task's id and context (the first seen),
 * and the last task state it carried. Read from the JSON-RPC result of a JSON answer or of each
 * event of an SSE answer, in both the v1.0 shapes (`task`, `message`, `statusUpdate`,
 * `artifactUpdate` wrappers; a bare Task for GetTask and CancelTask) and the v0.3 ones (`kind`).
 * The parsing of A2A results lives here, so what else is read of them (their texts) has one home.
 */
export type LearnedTask = { a2aTaskId?: string; a2aContextId?: string; a2aTaskState?: string };

/** A JSON answer is read up to this size for learning; a larger one teaches nothing. */
const JSON_MAX_BYTES = 4 * 1024 * 1024;
/** One SSE event is read up to this size; a larger event ends the learning of that stream. */
const EVENT_MAX_BYTES = 1024 * 1024;

/** A learner for a successful answer (2xx, JSON or SSE); null for any other. */
export function a2aLearner(head: AnswerHead): ResultLearner<LearnedTask> | null {
  if (head.status < 200 || head.status >= 300) return null;
  const type = head.headers["content-type"];
  const stream = isEventStream(typeof type === "string" ? type : null);
  return new ResultLearner<LearnedTask>(
    { stream, maxJson: JSON_MAX_BYTES, maxEvent: EVENT_MAX_BYTES },
    {},
    learnFromResult,
    watch,
    "a2aTaskState",
  );
}

const STATE = needles('"state"', "\\u");

/**
 * Which SSE events can change what was learned, without parsing them. Once the task and context
 * are known only a task state can, and a state is read from a `"state"` key: an event that holds
 * no `"state"` (nor a `\u` escape, which could spell one) is passed over, not even decoded. Most
 * of a long stream's events (artifact chunks) are skipped so. Of those that may hold a state, the
 * last wins: only the last that carries one is parsed.
 */
function watch(learned: LearnedTask): Needles | null {
  return learned.a2aTaskId === undefined || learned.a2aContextId === undefined ? null : STATE;
}

/** Learns from one JSON-RPC result of an A2A method (any version); unknown shapes teach nothing. */
export function learnFromResult(result: unknown, into: LearnedTask): void {
  if (!isRecord(result)) return;
  const task = taskOf(result);
  if (task) {
    first(into, "a2aTaskId", idOf(task.id));
    first(into, "a2aContextId", idOf(task.contextId));
    state(into, task.status);
    return;
  }
  const event = eventOf(result);
  if (event) {
    first(into, "a2aTaskId", idOf(event.taskId));
    first(into, "a2aContextId", idOf(event.contextId));
    state(into, event.status);
  }
}

/** A Task: v1.0 `{task}`, v0.3 `{kind: "task"}`, or a bare Task (GetTask, CancelTask). */
function taskOf(r: JsonObject): JsonObject | null {
  if (isRecord(r.task)) return r.task;
  if (r.kind === "task") return r;
  if (r.kind === undefined && typeof r.id === "string" && isRecord(r.status)) return r;
  return null;
}

/** A message or a status/artifact update, which name their task as `taskId`. */
function eventOf(r: JsonObject): JsonObject | null {
  for (const key of ["statusUpdate", "artifactUpdate", "message"] as const) {
    const v = r[key];
    if (isRecord(v)) return v;
  }
  if (r.kind === "status-update" || r.kind === "artifact-update" || r.kind === "message") return r;
  return null;
}

function first(into: LearnedTask, key: "a2aTaskId" | "a2aContextId", v: string | null): void {
  if (v !== null && into[key] === undefined) into[key] = v;
}

function state(into: LearnedTask, status: unknown): void {
  if (!isRecord(status)) return;
  const s = idOf(status.state);
  if (s !== null) into.a2aTaskState = s;
}
