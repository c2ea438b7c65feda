import {
  isResponseEvent,
  type JsonRpcId,
  type SseBlock,
  SseParser,
  sseDataLines,
  sseEvent,
  sseField,
} from "@gw/jsonrpc";
import { type Finding, redacted, redaction } from "@gw/policy";
import type { Answer, TextSpan } from "../protocols/protocol.ts";
import { type HeldResponse, isEventStreamAnswer } from "./held.ts";

/**
 * The answer with its response message replaced by `json`: in an SSE answer only that event's
 * data lines change (its other lines and every other event stay as they were); an SSE answer whose
 * response could not be found becomes one event; a JSON answer becomes `json`. The body is sent
 * decoded, its length counted anew by the relay.
 */
export function rewriteResponse(answer: Answer, located: HeldResponse | null, json: string): Answer {
  const { "content-length": _l, "content-encoding": _e, ...headers } = answer.headers;
  const sse = isEventStreamAnswer(answer.headers);
  let body: string;
  if (located?.sse) {
    body = rewriteEvent(located.sse.text, located.sse.block, json);
  } else if (sse) {
    body = sseEvent({ event: "message", data: json });
  } else {
    body = json;
    headers["content-type"] = "application/json";
  }
  return { status: answer.status, headers, body: Buffer.from(body) };
}

/**
 * `text` with the event `b` carrying `json` as its data: only its data lines change (its other
 * lines, its blank line and every other event stay as they were).
 */
export function rewriteEvent(text: string, b: SseBlock, json: string): string {
  const kept = b.lines.filter((l) => sseField(l.text)[0] !== "data").map((l) => l.raw);
  const blank = text.slice(b.end - (text[b.end - 2] === "\r" && text[b.end - 1] === "\n" ? 2 : 1), b.end);
  return `${text.slice(0, b.start)}${kept.join("")}${sseDataLines(json)}${blank}${text.slice(b.end)}`;
}

/**
 * `json` with each text at `spans` redacted at its findings (`found`, same order), front to back.
 * A string without an escape is its own text (`textAt`), so its findings are replaced in the JSON
 * as it stands (each marker is ASCII, and a finding ends on whole characters); a string with
 * escapes is written anew. The JSON is the one each redacted text written anew would give,
 * without re-encoding every redacted text (`JSON.stringify` of a 4 KiB text costs ~7 µs).
 */
export function redactTexts(
  json: string,
  spans: readonly TextSpan[],
  found: readonly (readonly Finding[])[],
): string {
  const changed = spans
    .map((s, i) => ({ s, f: found[i] ?? [] }))
    .filter((c) => c.f.length > 0)
    .sort((a, b) => a.s.start - b.s.start);
  let out = "";
  let at = 0;
  for (const { s, f } of changed) {
    if (s.text.length === s.end - s.start - 2) {
      const base = s.start + 1; // the text begins after the opening quote
      for (const x of f) {
        out += `${json.slice(at, base + x.start)}${redaction(x.kind)}`;
        at = base + x.end;
      }
    } else {
      out += `${json.slice(at, s.start)}${JSON.stringify(redacted(s.text, f))}`;
      at = s.end;
    }
  }
  return out + json.slice(at);
}

/**
 * The `endsAt` of a held SSE answer: true once the event carrying the response to `id` arrived
 * (the stream is then not read further; an MCP server closes it there anyway).
 */
export function responseEndsAt(id: JsonRpcId): (chunk: Buffer) => boolean {
  const parser = new SseParser();
  return (chunk) => {
    try {
      return parser.push(chunk).some((e) => isResponseEvent(e, id));
    } catch {
      return false;
    }
  };
}
