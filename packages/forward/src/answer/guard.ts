import {
  ANSWER_LIMITS,
  type AnswerVerdict,
  type CompiledAnswerRule,
  type CompiledPolicy,
  judgeAnswer,
  selectedAnswerRules,
} from "@gw/policy";
import type { Dispatcher } from "undici";
import type { Answer, AnswerCall, AnswerHook, BodyUse } from "../protocols/protocol.ts";
import { redactTexts, responseEndsAt, rewriteResponse } from "./guard-body.ts";
import { EventGuard, type Judge } from "./guard-events.ts";
import { type HeldResponse, isEventStreamAnswer, readHeld } from "./held.ts";

type Outcome = NonNullable<NonNullable<AnswerCall["guard"]>["outcome"]>;

/**
 * Answer guardrails (docs/policy.md "Answer guardrails"), one of the answer hooks of every
 * protocol whose `answerTexts` say what to read (MCP; A2A). Only a 2xx answer to a POST whose
 * call step 6 found answer rules for (`answerGuard`), of a method the protocol inspects, is read;
 * every other answer costs a field check and streams as before, unparsed. A JSON answer, or an
 * SSE answer's one response event (MCP), is held: at most 8 MiB (larger → blocked, fail closed),
 * judged by the rules (first rule with a finding acts), then redacted, blocked or passed with a
 * warning header. An SSE answer of many response events (A2A) is judged event by event as it
 * passes (guard-events.ts). The outcome is recorded with the invocation, and stored and captured
 * copies hold what the caller received.
 */
export function guardAnswerHook(deps: {
  policyOf: (tenantId: string) => Promise<CompiledPolicy | null>;
  /** The SSRF-guarded dispatcher classifier webhooks are asked through. */
  dispatcher: Dispatcher;
}): AnswerHook {
  return (call, head) => {
    const selection = call.answerGuard;
    const texts = call.speaks.answerTexts ?? null;
    if (selection === null || call.guard === null || texts === null || call.method !== "POST") return null;
    if (!texts.inspects(call.rpcMethod) || head.status < 200 || head.status > 299) return null;
    const sse = isEventStreamAnswer(head.headers);
    // An SSE answer whose every event is a response (A2A) is judged event by event (guard-events.ts).
    const each = sse && texts.events === "each";
    const use = (reshape: NonNullable<BodyUse["reshape"]>): BodyUse => ({
      hold: true,
      maxBytes: ANSWER_LIMITS.maxHeldBytes,
      reshape,
      ...(sse && call.rpcId !== null ? { endsAt: responseEndsAt(call.rpcId) } : {}),
    });
    return deps.policyOf(call.tenantId).then(
      (policy) => {
        if (policy === null) return null;
        const rules = selectedAnswerRules(policy, selection, {
          tenantId: call.tenantId,
          agentId: call.agentId,
          protocol: call.protocol,
          rpcMethod: call.rpcMethod,
          mcpTool: selection.tool,
        });
        if (rules.length === 0) return null;
        const judge = (texts: string[]) => judged(call, texts, rules, policy, deps.dispatcher);
        if (each) return eachEvent(new EventGuard(call, head, judge));
        return use((answer, whole) => guarded(call, answer, whole, judge));
      },
      // The policy could not be read: whether to guard is unknown, so the answer is blocked.
      () =>
        each
          ? eachEvent(new EventGuard(call, head, null))
          : use((answer) => block(call, answer, { unavailable: 1 })),
    );
  };
}

const eachEvent = (each: EventGuard): BodyUse => ({
  hold: false,
  maxBytes: ANSWER_LIMITS.maxHeldBytes,
  each,
});

/** The verdict of the call's answer rules on the texts of one response message. */
function judged(
  call: AnswerCall,
  texts: string[],
  rules: readonly CompiledAnswerRule[],
  policy: CompiledPolicy,
  dispatcher: Dispatcher,
): Promise<AnswerVerdict> {
  return judgeAnswer(rules, texts, {
    injected: call.guard?.secret ?? "",
    call: {
      tenantId: call.tenantId,
      agentId: call.agentId,
      protocol: call.protocol,
      method: call.rpcMethod,
      tool: call.answerGuard?.tool ?? null,
    },
    dispatcher,
    onError: policy.onError,
  });
}

async function guarded(call: AnswerCall, answer: Answer, whole: boolean, judge: Judge): Promise<Answer> {
  if (!whole || answer.body === null) return block(call, answer, { too_large: 1 });
  const located = readHeld(answer.body, answer.headers, call.rpcId, ANSWER_LIMITS.maxHeldBytes);
  const spans = located === null ? null : (call.speaks.answerTexts?.texts(located.json) ?? null);
  if (located === null || spans === null) return block(call, answer, { unreadable: 1 });
  const verdict = await judge(spans.map((s) => s.text));
  if (verdict.action === "pass") return answer;
  if (verdict.action === "block") return block(call, answer, verdict.findings, located);
  if (verdict.action === "warn") {
    settle(call, { action: "warned", findings: verdict.findings });
    const prior = call.responseHeaders["x-gateway-policy-warning"];
    call.responseHeaders["x-gateway-policy-warning"] = prior ? `${prior}; ${verdict.reason}` : verdict.reason;
    return answer;
  }
  settle(call, { action: "redacted", findings: verdict.findings });
  return rewriteResponse(answer, located, redactTexts(located.json, spans, verdict.found));
}

/** The blocked answer: the protocol's error for the request's id, on the upstream's status. */
function block(
  call: AnswerCall,
  answer: Answer,
  findings: Readonly<Record<string, number>>,
  located?: HeldResponse,
): Answer {
  settle(call, { action: "blocked", findings });
  const message = call.speaks.answerTexts?.blocked(call.rpcId) ?? "";
  return rewriteResponse(answer, located ?? null, message);
}

function settle(call: AnswerCall, outcome: Outcome): void {
  if (call.guard) call.guard.outcome = outcome;
}
