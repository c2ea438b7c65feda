import type { IncomingHttpHeaders } from "node:http";
import type { ForwardCall } from "./call.ts";

/**
 * An upstream answer as the answer-side features see it: its status and headers, and its body
 * when it was collected (a relayed body streams past and is not held).
 */
export type Answer = {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer | null;
};

/** A feature that learns from or reshapes answers; it returns the answer to go on with. */
export type AnswerHook = (call: ForwardCall, answer: Answer) => Answer;

/**
 * The answer-side features, in order: the one place step 9 lets a feature see every answer before
 * it is relayed or stored (a tool catalog learning from `tools/list` answers, and filtering them,
 * goes here). None is registered today: every answer goes on as the upstream sent it.
 */
export const answerHooks: AnswerHook[] = [];

/** Runs the answer through `answerHooks`. */
export function onAnswer(call: ForwardCall, answer: Answer): Answer {
  let out = answer;
  for (const hook of answerHooks) out = hook(call, out);
  return out;
}
