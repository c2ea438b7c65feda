import { type Dispatcher, request } from "undici";
import * as v from "valibot";
import type { ClassifierRef, Decision } from "./compile.ts";
import type { PolicyInput } from "./input.ts";
import { ACTIONS, type PolicyAction } from "./schema.ts";

/** A classifier's answer is small; anything larger is garbage, and reading stops there. */
const MAX_ANSWER_BYTES = 16 * 1024;
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
    mcp_method: input.mcpMethod,
    mcp_tool: input.mcpTool,
    model: input.model,
  });
}

/** Printable ASCII only and short: a reason is recorded and may become a response header value. */
export function safeReason(s: string): string {
  const cleaned = s.replace(/[^\x20-\x7e]/g, "?");
  return cleaned.length > REASON_MAX ? cleaned.slice(0, REASON_MAX) : cleaned;
}

type Failure = "timed out" | "unreachable" | "answered an error status" | "answer malformed";

async function readCapped(body: Dispatcher.ResponseData["body"]): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

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
  const signal = AbortSignal.timeout(ref.timeoutMs);
  let failure: Failure;
  try {
    const res = await request(ref.url, {
      method: "POST",
      dispatcher: opts.dispatcher,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: classifierPayload(input),
      signal,
      headersTimeout: ref.timeoutMs,
      bodyTimeout: ref.timeoutMs,
    });
    // Destroying an unread body emits an error; without a listener it would crash the process.
    res.body.on("error", () => {});
    if (res.statusCode < 200 || res.statusCode > 299) {
      res.body.destroy();
      failure = "answered an error status";
    } else {
      const bytes = await readCapped(res.body);
      const parsed = bytes ? parseAnswer(bytes) : undefined;
      if (parsed) {
        return {
          action: parsed.action,
          matchedRule: ref.position,
          reason: parsed.reason ? `classifier: ${safeReason(parsed.reason)}` : "classifier",
        };
      }
      failure = "answer malformed";
    }
  } catch {
    failure = signal.aborted ? "timed out" : "unreachable";
  }
  return { action: opts.onError, matchedRule: "", reason: `on_error: classifier ${failure}` };
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
