import { RECORDED } from "@gw/invocations";
import { annotateA2aSpan, traceA2aCall } from "@gw/telemetry";
import type { AnswerHook, Protocol, RequestFacts } from "../protocol.ts";
import { a2aLearner } from "./answer.ts";
import { isRetryableA2aMethod } from "./methods.ts";
import { type A2aRequest, parseA2aRequest } from "./request.ts";
import { a2aAnswerTexts } from "./texts.ts";

const NONE: readonly AnswerHook[] = [];

export { type LearnedTask, learnFromResult } from "./answer.ts";
export * from "./card.ts";
export * from "./methods.ts";
export { type A2aRequest, parseA2aRequest } from "./request.ts";
export { A2A_INSPECTED_METHODS, a2aAnswerTexts } from "./texts.ts";

/**
 * An A2A agent over its JSON-RPC binding, v1.0 and v0.3 (docs/a2a.md). A POST's body must be one
 * JSON-RPC 2.0 request (400 otherwise), held on the streaming path too; its method, task and
 * context are recorded, and the task, context and last task state an answer carries are learned
 * as it passes (never delaying it). SSE answers (`SendStreamingMessage`, `SubscribeToTask`, v0.3
 * `message/stream`, `tasks/resubscribe`) are relayed event by event, and stored whole, as they
 * came, on the transactional path. Only the read methods are retried or repeated; `SendMessage`
 * never. Push notification URLs in a request are checked against the SSRF rules by the pipeline
 * (`pushUrls`). Answer guardrails judge the JSON answers of `SendMessage` and `GetTask` (v0.3
 * `message/send`, `tasks/get`; `texts.ts`); SSE answers pass unread. The request's span carries
 * the GenAI agent attributes.
 */
export const a2a: Protocol<"a2a"> = {
  name: "a2a",
  streamMethods: new Set(),
  holdsBody: true,
  parse(body, _headers, agent) {
    const request = parseA2aRequest(body);
    traceA2aCall(request, agent);
    return request;
  },
  records: RECORDED.a2a,
  recorded(facts: RequestFacts | null) {
    const r = facts as A2aRequest | null;
    return {
      a2aMethod: r?.method ?? null,
      a2aTaskId: r?.taskId ?? null,
      a2aContextId: r?.contextId ?? null,
    };
  },
  learn: (head) => a2aLearner(head),
  annotate: (method, id) => annotateA2aSpan(method, id),
  retryable: isRetryableA2aMethod,
  repeatable: isRetryableA2aMethod,
  collectUpTo: () => null,
  verified: false,
  checksOrigin: true,
  answerTexts: a2aAnswerTexts,
  answerHooks: (features) => (features.guard ? [features.guard] : NONE),
};
