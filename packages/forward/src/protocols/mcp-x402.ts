import type { IncomingHttpHeaders } from "node:http";
import {
  isEventStream,
  isRecord,
  type JsonRpcId,
  SseSplitter,
  sseBlocks,
  sseDataLines,
  sseField,
} from "@gw/jsonrpc";
import {
  type AdmittedPayment,
  offerOf,
  type PaymentResponse,
  priceMeta,
  type Settled,
  settledResponse,
  type ToolPriceTable,
  toolPaymentRefused,
  toolPriceTable,
  unsettledResponse,
  X402_PAYMENT_RESPONSE_META,
  X402_PRICE_META,
} from "@gw/payments";
import type { Answer, AnswerCall, AnswerHook, BodyUse, EventStep, EventTransform } from "./protocol.ts";

/** A response message the hook reads whole: a tools/list page is bounded by the catalog's limit. */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
const EMPTY = Buffer.alloc(0);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * x402 over MCP on the answer side (docs/payments.md, MCP tool calls), for both paths and for
 * virtual servers' own answers: a `tools/list` result of an agent with per-tool prices, and a
 * search-mode virtual server's `search_tools` result, get `_meta["x402/price"]` on each priced
 * tool; the result of a settled tool call gets
 * `_meta["x402/payment-response"]`. Every other answer costs two comparisons. A JSON answer is
 * held (bounded); of an SSE answer only the response message to the request is held, every earlier
 * event passes as it came. An answer with a Content-Encoding is left as it is.
 */
export const x402AnswerHook: AnswerHook = (call, head) => {
  if (call.method !== "POST" || head.status < 200 || head.status > 299) return null;
  const id = call.rpcId;
  if (id === null) return null;
  let edit: ((result: Record<string, unknown>) => boolean) | null = null;
  if (call.rpcMethod === "tools/list" && call.prices) {
    const table = toolPriceTable(call.prices);
    if (table) edit = (result) => priceTools(result, table);
  } else if (call.rpcMethod === "tools/call") {
    // Prices on a tools/call: a search-mode virtual server's search_tools (set for nothing else).
    const table = call.prices ? toolPriceTable(call.prices) : null;
    const response = call.paymentResponse;
    if (table || response) {
      edit = (result) => {
        const priced = table !== null && priceFound(result, table);
        return (response ? addPaymentResponse(result, response) : false) || priced;
      };
    }
  }
  if (edit === null || encoded(head.headers)) return null;
  const rewrite = rewriter(id, edit);
  if (isEventStream(single(head.headers["content-type"]))) {
    return { hold: false, maxBytes: MAX_MESSAGE_BYTES, each: new ResponseEvent(rewrite) };
  }
  return {
    hold: true,
    maxBytes: MAX_MESSAGE_BYTES,
    reshape: (answer, whole) => (whole ? rewritten(answer, rewrite) : answer),
  } satisfies BodyUse;
};

function priceTools(result: Record<string, unknown>, table: ToolPriceTable): boolean {
  if (!Array.isArray(result.tools)) return false;
  let changed = false;
  for (const tool of result.tools) {
    if (!isRecord(tool) || typeof tool.name !== "string") continue;
    const terms = table.match(tool.name);
    if (!terms) continue;
    tool._meta = { ...(isRecord(tool._meta) ? tool._meta : {}), [X402_PRICE_META]: priceMeta(terms) };
    changed = true;
  }
  return changed;
}

/**
 * A `search_tools` result: its found tools (`structuredContent.tools`) priced as `tools/list`
 * prices them, and the text content, the same JSON, written again.
 */
function priceFound(result: Record<string, unknown>, table: ToolPriceTable): boolean {
  const found = result.structuredContent;
  if (!isRecord(found) || !priceTools(found, table)) return false;
  const first = Array.isArray(result.content) ? result.content[0] : undefined;
  if (isRecord(first) && first.type === "text") first.text = JSON.stringify(found);
  return true;
}

function addPaymentResponse(result: Record<string, unknown>, response: PaymentResponse): boolean {
  result._meta = { ...(isRecord(result._meta) ? result._meta : {}), [X402_PAYMENT_RESPONSE_META]: response };
  return true;
}

/** The JSON-RPC response text to `id` with its result edited; null: not that response, left as it is. */
function rewriter(id: JsonRpcId, edit: (result: Record<string, unknown>) => boolean) {
  return (json: string): string | null => {
    let msg: unknown;
    try {
      msg = JSON.parse(json);
    } catch {
      return null;
    }
    if (!isRecord(msg) || msg.id !== id || !isRecord(msg.result)) return null;
    return edit(msg.result) ? JSON.stringify(msg) : null;
  };
}

/** A held JSON answer with its response rewritten (its length set again by the relay). */
function rewritten(answer: Answer, rewrite: (json: string) => string | null): Answer {
  if (answer.body === null) return answer;
  let text: string;
  try {
    text = utf8.decode(answer.body);
  } catch {
    return answer;
  }
  const out = rewrite(text);
  if (out === null) return answer;
  const { "content-length": _l, ...headers } = answer.headers;
  return { status: answer.status, headers, body: Buffer.from(out) };
}

/**
 * An SSE answer event by event: every event passes as it came until the response to the request,
 * whose data lines are replaced by the rewritten message (its other lines kept). Only the event
 * being read is held; one over the bound ends the stream there (it cannot be passed unread).
 */
class ResponseEvent implements EventTransform {
  readonly #split = new SseSplitter(MAX_MESSAGE_BYTES);
  #done = false;

  /** `rewrite` answers null for every message but the response to the request (`rewriter`). */
  constructor(private readonly rewrite: (json: string) => string | null) {}

  async push(chunk: Buffer): Promise<EventStep> {
    if (this.#done) return { out: chunk, end: false };
    const events = this.#split.push(chunk);
    if (this.#split.over) return { out: Buffer.concat(events), end: true };
    for (let i = 0; i < events.length; i++) {
      const changed = this.#event(events[i] as Buffer);
      if (changed === null) continue;
      events[i] = changed;
      // The response is the last message of the request's stream: what follows passes unread.
      this.#done = true;
      events.push(this.#split.rest());
      break;
    }
    return { out: events.length === 1 ? (events[0] as Buffer) : Buffer.concat(events), end: false };
  }

  end(): Buffer {
    return this.#done ? EMPTY : this.#split.rest();
  }

  refused(): Buffer {
    return EMPTY;
  }

  #event(raw: Buffer): Buffer | null {
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      return null;
    }
    const block = sseBlocks(text).find((b) => b.data !== null);
    const data = block?.data;
    if (!block || !data?.includes('"result"')) return null;
    const out = this.rewrite(data);
    if (out === null) return null;
    const kept = block.lines.filter((l) => sseField(l.text)[0] !== "data").map((l) => l.raw);
    const blank = text.slice(block.end - (text.endsWith("\r\n") ? 2 : 1), block.end);
    return Buffer.from(
      `${text.slice(0, block.start)}${kept.join("")}${sseDataLines(out)}${blank}${text.slice(block.end)}`,
    );
  }
}

function encoded(headers: IncomingHttpHeaders): boolean {
  const encoding = String(headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  return encoding !== "" && encoding !== "identity";
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The receipt a settled tool payment adds to the result: null when nothing was settled (the
 * tenant has no facilitator: the payment was verified only) or settlement failed.
 */
export function toolPaymentResponse(payment: AdmittedPayment, settled: Settled): PaymentResponse | null {
  const s = settled.facts(true).settlement;
  return s?.status === "settled" && s.tx_hash ? settledResponse(payment, s.tx_hash) : null;
}

/**
 * A tool payment whose settlement failed, as the transport answers it: the payment-required
 * result with `error` "settlement_failed" and the failed settle response in `_meta`. Null for a
 * payment that is not a tool's (the HTTP path's 402).
 */
export function toolSettlementRefused(call: AnswerCall, settled: Settled, headers: Record<string, string>) {
  const payment = call.payment;
  if (!payment?.tool) return null;
  const offer = offerOf({ ...payment, tool: payment.tool });
  if (offer === null) return null;
  const reason = settled.facts(false).settlement?.reason ?? "unexpected_settle_error";
  return toolPaymentRefused(
    call.rpcId,
    offer,
    "settlement_failed",
    unsettledResponse(payment, reason),
    headers,
  );
}
