import {
  FrameTooLargeError,
  isEventStream,
  isRecord,
  type JsonObject,
  parseJson,
  SseParser,
} from "@gw/jsonrpc";
import type { AnswerHead } from "../protocol.ts";
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

/**
 * Learns from an answer as it passes, chunk by chunk, after each chunk was delivered: it never
 * holds the answer back. An SSE answer is parsed event by event (an event cut off by the end of the
 * stream teaches nothing); a JSON answer is kept (bounded) and read once, when the facts are asked.
 */
export class A2aLearner {
  readonly #learned: LearnedTask = {};
  readonly #sse: SseParser | null;
  #chunks: Buffer[] | null = [];
  #size = 0;

  private constructor(stream: boolean) {
    this.#sse = stream ? new SseParser({ maxEventBytes: EVENT_MAX_BYTES }) : null;
  }

  /** A learner for a successful answer (2xx, JSON or SSE); null for any other. */
  static of(head: AnswerHead): A2aLearner | null {
    if (head.status < 200 || head.status >= 300) return null;
    const type = head.headers["content-type"];
    return new A2aLearner(isEventStream(typeof type === "string" ? type : null));
  }

  add(chunk: Buffer): void {
    if (this.#sse) {
      this.#events(chunk);
      return;
    }
    if (this.#chunks === null) return;
    this.#size += chunk.length;
    if (this.#size > JSON_MAX_BYTES) this.#chunks = null;
    else this.#chunks.push(chunk);
  }

  /** What was learned so far (a JSON answer is read now, once). */
  facts(): LearnedTask {
    if (this.#chunks !== null && this.#sse === null) {
      const chunks = this.#chunks;
      this.#chunks = null;
      if (chunks.length > 0) this.#message(Buffer.concat(chunks).toString("utf8"));
    }
    return this.#learned;
  }

  #events(chunk: Buffer): void {
    const sse = this.#sse as SseParser;
    if (this.#chunks === null) return;
    try {
      for (const e of sse.push(chunk)) if (e.data !== "") this.#message(e.data);
    } catch (e) {
      // An event past the cap: the rest of this stream is not learned from.
      if (!(e instanceof FrameTooLargeError)) throw e;
      this.#chunks = null;
    }
  }

  #message(text: string): void {
    const msg = parseJson(text);
    if (isRecord(msg) && "result" in msg) learnFromResult(msg.result, this.#learned);
  }
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
