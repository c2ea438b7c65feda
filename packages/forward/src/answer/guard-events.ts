import type { IncomingHttpHeaders } from "node:http";
import { isRecord, SseSplitter, sseBlocks, sseEvent } from "@gw/jsonrpc";
import { ANSWER_LIMITS, type AnswerVerdict } from "@gw/policy";
import type { AnswerCall, EventStep, EventTransform } from "../protocols/protocol.ts";
import { redactTexts, rewriteEvent } from "./guard-body.ts";

/** The verdict of the call's answer rules on the texts of one response message. */
export type Judge = (texts: string[]) => Promise<AnswerVerdict>;

type Findings = Readonly<Record<string, number>>;
type Action = "redacted" | "blocked" | "warned";
const RANK: Record<Action, number> = { warned: 1, redacted: 2, blocked: 3 };
const EMPTY = Buffer.alloc(0);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Answer guardrails on an SSE answer whose every event is a response to the request (A2A's
 * streams; docs/policy.md "Answer guardrails", ADR 0035): each event is held until its blank line
 * (at most ANSWER_LIMITS.maxHeldBytes), judged by the rules, then passed as it came, passed with
 * its texts redacted, or (block) replaced by the protocol's error for the request's id, after
 * which the stream ends. A warning is recorded only: the head left before the first event.
 *
 * Events no rule reads (comments, data that is not JSON, JSON that is not a response) pass as
 * they came. What cannot be judged blocks the stream (fail closed): an event over the bound, an
 * event that is not UTF-8, data that opens as JSON but does not parse, a response the protocol
 * cannot read, an encoded body, a policy that could not be read (`judge` null). An event no blank
 * line closed when the stream ends is dropped, never sent unjudged. The outcomes of the events
 * add up on the call (the strongest action, the findings summed), recorded with the invocation.
 */
export class EventGuard implements EventTransform {
  readonly #split = new SseSplitter(ANSWER_LIMITS.maxHeldBytes);
  /** The stream was ended by a block: nothing more is read or sent. */
  #done = false;
  readonly #encoded: boolean;

  constructor(
    private readonly call: AnswerCall,
    head: { readonly headers: IncomingHttpHeaders },
    private readonly judge: Judge | null,
  ) {
    const encoding = String(head.headers["content-encoding"] ?? "")
      .trim()
      .toLowerCase();
    this.#encoded = encoding !== "" && encoding !== "identity";
  }

  async push(chunk: Buffer): Promise<EventStep> {
    if (this.#done) return { out: EMPTY, end: true };
    if (this.judge === null) return this.#block([], { unavailable: 1 });
    if (this.#encoded) return this.#block([], { unreadable: 1 });
    const events = this.#split.push(chunk);
    const out: Buffer[] = [];
    for (const raw of events) {
      const judged = await this.#event(raw, this.judge);
      if (!Buffer.isBuffer(judged)) return this.#block(out, judged);
      out.push(judged);
    }
    if (this.#split.over) return this.#block(out, { too_large: 1 });
    return { out: out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out), end: false };
  }

  end(): Buffer {
    if (this.#done) return EMPTY;
    this.#done = true;
    // An event cut off (the stream ended or broke before its blank line) is dropped, and recorded.
    if (this.#split.rest().length > 0) this.#add("blocked", { incomplete: 1 });
    return EMPTY;
  }

  refused(): Buffer {
    return this.#block([], { too_large: 1 }).out;
  }

  /** One closed event as the caller receives it, or the findings it blocks the stream with. */
  async #event(raw: Buffer, judge: Judge): Promise<Buffer | Findings> {
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      return { unreadable: 1 };
    }
    const block = sseBlocks(text).find((b) => b.data !== null);
    const data = block?.data;
    if (block === undefined || data == null || !/^\s*[[{]/.test(data)) return raw;
    const answerTexts = this.call.speaks.answerTexts;
    const spans = answerTexts?.texts(data) ?? null;
    if (spans === null) return notResponse(data) ? raw : { unreadable: 1 };
    if (spans.length === 0) return raw;
    const verdict = await judge(spans.map((s) => s.text));
    if (verdict.action === "pass") return raw;
    if (verdict.action === "block") return verdict.findings;
    if (verdict.action === "warn") {
      this.#add("warned", verdict.findings);
      return raw;
    }
    this.#add("redacted", verdict.findings);
    return Buffer.from(rewriteEvent(text, block, redactTexts(data, spans, verdict.found)));
  }

  /** Ends the stream after `before` with the protocol's error for the request's id. */
  #block(before: Buffer[], findings: Findings): EventStep {
    this.#done = true;
    this.#add("blocked", findings);
    const error = sseEvent({ data: this.call.speaks.answerTexts?.blocked(this.call.rpcId) ?? "" });
    return { out: Buffer.concat([...before, Buffer.from(error)]), end: true };
  }

  /** Adds one event's outcome to the call's: the strongest action, the findings summed. */
  #add(action: Action, findings: Findings): void {
    const guard = this.call.guard;
    if (!guard) return;
    const prior = guard.outcome;
    const sum: Record<string, number> = { ...prior?.findings };
    for (const [k, n] of Object.entries(findings)) sum[k] = (sum[k] ?? 0) + n;
    const strongest = prior && RANK[prior.action] >= RANK[action] ? prior.action : action;
    guard.outcome = { action: strongest, findings: sum };
  }
}

/**
 * Data that parses as JSON but is not a JSON-RPC response object (an event no rule reads). Data
 * that does not parse, and an array (a batch could carry responses), are not that: they block.
 */
function notResponse(data: string): boolean {
  try {
    const v: unknown = JSON.parse(data);
    return isRecord(v) && !("result" in v) && !("error" in v);
  } catch {
    return false;
  }
}
