import type { Dispatcher } from "undici";
import * as v from "valibot";
import { postClassifier, safeReason } from "../classifier.ts";
import type { PolicyAction } from "../schema.ts";
import { ANSWER_LIMITS } from "./schema.ts";

/** What an answer classifier may say: pass it, warn, or block it ("deny" is read as block). */
const Answer = v.strictObject({
  action: v.picklist(["allow", "warn", "block", "deny"]),
  reason: v.optional(v.pipe(v.string(), v.maxLength(1000))),
});

/** The call an answer belongs to, as its classifier is told. */
export type AnswerCallFacts = {
  readonly tenantId: string;
  readonly agentId: string;
  readonly protocol: string;
  readonly method: string | null;
  readonly tool: string | null;
};

export type ClassifierVerdict = { readonly action: "allow" | "warn" | "block"; readonly reason: string };

/**
 * The texts a classifier receives: in order, cut so their UTF-8 total stays within 64 KiB (a text
 * cut short ends at a whole character; the rest are left out).
 */
export function classifierContent(texts: readonly string[]): string[] {
  const out: string[] = [];
  let room = ANSWER_LIMITS.classifierContentMaxBytes;
  for (const text of texts) {
    if (room <= 0) break;
    const bytes = Buffer.byteLength(text);
    if (bytes <= room) {
      out.push(text);
      room -= bytes;
      continue;
    }
    const cut = Buffer.from(text)
      .subarray(0, room)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
    out.push(cut);
    break;
  }
  return out;
}

/**
 * Asks an answer rule's classifier about an answer's texts: `{tenant_id, agent_id, protocol,
 * method, tool, content}` through the SSRF-guarded dispatcher. Errors, time-outs and garbage give
 * the policy's `on_error` (allow → pass, warn → warn, deny → block).
 */
export async function askAnswerClassifier(
  ref: { readonly url: string; readonly timeoutMs: number },
  call: AnswerCallFacts,
  texts: readonly string[],
  opts: { dispatcher: Dispatcher; onError: PolicyAction },
): Promise<ClassifierVerdict> {
  const payload = JSON.stringify({
    tenant_id: call.tenantId,
    agent_id: call.agentId,
    protocol: call.protocol,
    method: call.method,
    tool: call.tool,
    content: classifierContent(texts),
  });
  const posted = await postClassifier(ref, payload, opts.dispatcher);
  if (posted.ok) {
    const parsed = parse(posted.bytes);
    if (parsed) {
      return {
        action: parsed.action === "deny" ? "block" : parsed.action,
        reason: parsed.reason ? `classifier: ${safeReason(parsed.reason)}` : "classifier",
      };
    }
  }
  const failure = posted.ok ? "answer malformed" : posted.failure;
  const action = opts.onError === "deny" ? "block" : opts.onError;
  return { action, reason: `on_error: classifier ${failure}` };
}

function parse(bytes: Buffer): v.InferOutput<typeof Answer> | undefined {
  try {
    const r = v.safeParse(Answer, JSON.parse(bytes.toString("utf8")));
    return r.success ? r.output : undefined;
  } catch {
    return undefined;
  }
}
