import { LIMITS } from "@gw/core";
import { callOut } from "@gw/upstream";
import type { Dispatcher } from "undici";
import * as v from "valibot";
import type { ClassifierRef, Decision } from "./compile.ts";
import type { PolicyInput } from "./input.ts";
import { ACTIONS, type PolicyAction } from "./schema.ts";

const REASON_MAX = 200;

const Answer = v.strictObject({
  action: v.picklist(ACTIONS),
  reason: v.optional(v.pipe(v.string(), v.maxLength(1000))),
});

/**
 * The webhook body: exactly these six metadata fields. Never the request body, never the caller's
 * token; nulls for http calls. Built field by field so nothing else can slip in.
 */
export function classifierPayload(input: PolicyInput): string {
  return JSON.stringify({
    tenant_id: input.tenantId,
    agent_id: input.agentId,
    protocol: input.protocol,
    mcp_method: input.rpcMethod,
    mcp_tool: input.mcpTool,
    model: input.model,
  });
}

/** Printable ASCII only and short: a reason is recorded and may become a response header value. */
export function safeReason(s: string): string {
  const cleaned = s.replace(/[^\x20-\x7e]/g, "?");
  return cleaned.length > REASON_MAX ? cleaned.slice(0, REASON_MAX) : cleaned;
}

export type Failure = "timed out" | "unreachable" | "answered an error status" | "answer malformed";

/**
 * Asks a classifier webhook for a decision, through the runtime's SSRF-guarded dispatcher (the
 * same dial-time guard as upstreams; redirects are never followed). Any failure (time-out, refused
 * connection, non-2xx, non-JSON, a field too many or too few) gives `onError` with matched rule "".
 */
export async function askClassifier(
  ref: ClassifierRef,
  input: PolicyInput,
  opts: { dispatcher: Dispatcher; onError: PolicyAction },
): Promise<Decision> {
  const posted = await postClassifier(ref, classifierPayload(input), opts.dispatcher);
  const parsed = posted.ok ? parseAnswer(posted.bytes) : undefined;
  if (parsed) {
    return {
      action: parsed.action,
      matchedRule: ref.position,
      reason: parsed.reason ? `classifier: ${safeReason(parsed.reason)}` : "classifier",
    };
  }
  const failure = posted.ok ? "answer malformed" : posted.failure;
  return { action: opts.onError, matchedRule: "", reason: `on_error: classifier ${failure}` };
}

/**
 * POSTs a JSON payload to a classifier webhook through the SSRF-guarded dispatcher (`callOut`),
 * bounded by `timeoutMs` and by LIMITS.classifierAnswerMaxBytes of answer: the answer's bytes on a
 * 2xx, else why there are none. Never throws.
 */
export async function postClassifier(
  ref: { readonly url: string; readonly timeoutMs: number },
  payload: string,
  dispatcher: Dispatcher,
): Promise<{ ok: true; bytes: Buffer } | { ok: false; failure: Failure }> {
  const answer = await callOut({
    via: dispatcher,
    url: ref.url,
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: payload,
    timeoutMs: ref.timeoutMs,
    maxBytes: LIMITS.classifierAnswerMaxBytes,
    reads: (status) => status >= 200 && status <= 299,
  });
  switch (answer.kind) {
    case "answer":
      return { ok: true, bytes: answer.body };
    case "dropped":
      return { ok: false, failure: "answered an error status" };
    case "too_large":
      return { ok: false, failure: "answer malformed" };
    case "failed":
      return { ok: false, failure: answer.failure === "timeout" ? "timed out" : "unreachable" };
  }
}

function parseAnswer(bytes: Buffer): v.InferOutput<typeof Answer> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  const r = v.safeParse(Answer, json);
  return r.success ? r.output : undefined;
}
