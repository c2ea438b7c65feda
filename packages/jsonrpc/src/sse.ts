import { StringDecoder } from "node:string_decoder";

/**
 * One dispatched server-sent event. `event` is "message" when the stream named no type; `id` is
 * the last event id in force when the event was dispatched ("" when none was ever set).
 */
export type SseEvent = { event: string; data: string; id: string };

const LF = 10;
const CR = 13;

/**
 * A frame (an SSE event, a line of newline-delimited JSON) outgrew its parser's cap: what it had
 * buffered passed `maxBytes`. The stream should be closed; the parser is spent.
 */
export class FrameTooLargeError extends Error {
  override name = "FrameTooLargeError";
  readonly code = "GW_FRAME_TOO_LARGE";
  constructor(readonly maxBytes: number) {
    super(`stream frame larger than ${maxBytes} bytes`);
  }
}

/**
 * Incremental parser for `text/event-stream` (WHATWG HTML, "Event stream interpretation"). Feed
 * it chunks as they arrive, split anywhere (inside a CRLF, inside a multi-byte UTF-8 character);
 * it returns the events each chunk completes. Lines end with LF, CRLF or CR; `:` lines are
 * comments; multi-line `data:` is joined with LF; `id` persists across events as the spec's last
 * event id. An event still open when the stream ends is discarded, as the spec requires.
 *
 * Only the current line and the current event's data are buffered, and only newly arrived text is
 * scanned, so a long line fed in small chunks costs linear time. `maxEventBytes` bounds what one
 * event may buffer (UTF-8 bytes of its data lines and of the line being read): past it `push`
 * throws FrameTooLargeError, so a peer that never ends a line or an event cannot grow memory.
 */
export class SseParser {
  // Node's StringDecoder rather than a streaming TextDecoder: the same text for any split of any
  // bytes (a split character waits for the rest, a broken one becomes U+FFFD), at about a quarter
  // of the cost per stream (a TextDecoder prepares an ICU converter for each). TextDecoder's one
  // other act, dropping a byte order mark that starts the stream, is done here (#started).
  #decoder = new StringDecoder("utf8");
  #started = false;
  #line = "";
  #max: number;
  /** UTF-8 bytes of `#line` and of `#data`, counted only under a cap. */
  #lineBytes = 0;
  #dataBytes = 0;
  /** The previous chunk ended in CR: a LF that starts the next one belongs to that CRLF. */
  #skipLf = false;
  #data: string[] = [];
  #event = "";
  #lastEventId = "";
  #retryMs: number | undefined;

  constructor(opts: { maxEventBytes?: number } = {}) {
    this.#max = opts.maxEventBytes ?? Number.POSITIVE_INFINITY;
  }

  /** The id of the last `id:` field seen, as a reconnecting client would send in Last-Event-ID. */
  get lastEventId(): string {
    return this.#lastEventId;
  }

  /** The reconnection time the stream last asked for with `retry:`, in milliseconds. */
  get retryMs(): number | undefined {
    return this.#retryMs;
  }

  /** Parses one chunk and returns the events it completed, in order. */
  push(chunk: Uint8Array): SseEvent[] {
    return this.#feed(this.#text(this.#decoder.write(chunk)));
  }

  /** Ends the stream: flushes the decoder and drops an event that no blank line closed. */
  end(): SseEvent[] {
    const events = this.#feed(this.#text(this.#decoder.end()));
    this.#started = false;
    this.#line = "";
    this.#data = [];
    this.#event = "";
    this.#lineBytes = 0;
    this.#dataBytes = 0;
    return events;
  }

  /** Decoded text with the stream's leading byte order mark dropped (the spec ignores it). */
  #text(text: string): string {
    if (this.#started || text === "") return text;
    this.#started = true;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  /** Counts `bytes` more buffered by the current event; throws past the cap. */
  #grow(bytes: number): void {
    if (this.#lineBytes + this.#dataBytes + bytes > this.#max) throw new FrameTooLargeError(this.#max);
  }

  #feed(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.#skipLf && text.length > 0) {
      if (text.charCodeAt(0) === LF) start = 1;
      this.#skipLf = false;
    }
    // Line ends are found with indexOf (native) rather than by reading each character in a loop;
    // a stream with no CR at all looks for one once per chunk.
    let lf = text.indexOf("\n", start);
    let cr = text.indexOf("\r", start);
    while (lf !== -1 || cr !== -1) {
      let i = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      const c = text.charCodeAt(i);
      const piece = text.slice(start, i);
      if (this.#max !== Number.POSITIVE_INFINITY) this.#grow(Buffer.byteLength(piece));
      const line = this.#line + piece;
      this.#line = "";
      this.#lineBytes = 0;
      if (c === CR) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === LF) i++;
        } else {
          this.#skipLf = true;
        }
      }
      start = i + 1;
      if (lf !== -1 && lf < start) lf = text.indexOf("\n", start);
      if (cr !== -1 && cr < start) cr = text.indexOf("\r", start);
      const event = this.#processLine(line);
      if (event) events.push(event);
    }
    const rest = text.slice(start);
    if (this.#max !== Number.POSITIVE_INFINITY && rest !== "") {
      const bytes = Buffer.byteLength(rest);
      this.#grow(bytes);
      this.#lineBytes += bytes;
    }
    this.#line += rest;
    return events;
  }

  #processLine(line: string): SseEvent | undefined {
    if (line === "") return this.#dispatch();
    if (line.charCodeAt(0) === 0x3a) return undefined; // ":" comment
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case "event":
        this.#event = value;
        break;
      case "data":
        this.#data.push(value);
        if (this.#max !== Number.POSITIVE_INFINITY) this.#dataBytes += Buffer.byteLength(value) + 1;
        break;
      case "id":
        if (!value.includes("\0")) this.#lastEventId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.#retryMs = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
    return undefined;
  }

  #dispatch(): SseEvent | undefined {
    const data = this.#data;
    const event = this.#event;
    this.#data = [];
    this.#event = "";
    this.#dataBytes = 0;
    // A blank line with no data line dispatches nothing (a `retry:` or `id:`-only block).
    if (data.length === 0) return undefined;
    return { event: event || "message", data: data.join("\n"), id: this.#lastEventId };
  }
}

/** An event to write: `data` may hold line breaks (each line becomes a `data:` line). */
export type SseOut = { data: string; event?: string | undefined; id?: string | undefined; retryMs?: number };

const BREAK = /\r\n|\r|\n/;

/**
 * One event in `text/event-stream` framing, ending with its blank line. Every line of `data`
 * becomes its own `data:` line, so a reader rebuilds it exactly (with LF for each break). `event`
 * and `id` are single-line fields: a line break in them is refused (it would end the field and
 * start another one: an injection), as is NUL in an id, which readers ignore.
 */
export function sseEvent(out: SseOut): string {
  let text = "";
  if (out.event !== undefined) text += `event: ${singleLine("event", out.event)}\n`;
  if (out.id !== undefined) {
    if (out.id.includes("\0")) throw new TypeError("an SSE id must not contain NUL");
    text += `id: ${singleLine("id", out.id)}\n`;
  }
  if (out.retryMs !== undefined) text += `retry: ${Math.max(0, Math.trunc(out.retryMs))}\n`;
  return `${text}${sseDataLines(out.data)}\n`;
}

/** The `data:` lines of one event's data (no closing blank line). */
export function sseDataLines(data: string): string {
  let text = "";
  for (const line of data.split(BREAK)) text += `data: ${line}\n`;
  return text;
}

/** A comment line and its blank line (a keep-alive): readers skip it. Line breaks are spaces. */
export function sseComment(text: string): string {
  return `: ${text.replace(/\r\n|\r|\n/g, " ")}\n\n`;
}

function singleLine(field: string, value: string): string {
  if (BREAK.test(value)) throw new TypeError(`an SSE ${field} must be one line`);
  return value;
}

/** One line of a block: its text without the line end, and its exact bytes with it. */
export type SseLine = { text: string; raw: string };

/**
 * One closed event of a held stream text and its exact extent `[start, end)` (its blank line
 * included), for byte-exact surgery on one event: `event` and `data` as a reader dispatches them
 * (`data` null when no data line), `lines` as they were written.
 */
export type SseBlock = { start: number; end: number; lines: SseLine[]; event: string; data: string | null };

/**
 * The closed events of a whole `text/event-stream` text, in order. A trailing event no blank line
 * closed is not an event (readers discard it) and is not returned.
 */
export function sseBlocks(text: string): SseBlock[] {
  const out: SseBlock[] = [];
  const re = /([^\r\n]*)(\r\n|\r|\n)/g;
  let current: { start: number; lines: SseLine[] } | null = null;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const line = m[1] as string;
    current ??= { start: m.index, lines: [] };
    if (line !== "") {
      current.lines.push({ text: line, raw: m[0] });
      continue;
    }
    let event = "message";
    const data: string[] = [];
    for (const l of current.lines) {
      if (l.text.startsWith(":")) continue;
      const [field, value] = sseField(l.text);
      if (field === "event") event = value || "message";
      else if (field === "data") data.push(value);
    }
    const end = m.index + m[0].length;
    out.push({
      start: current.start,
      end,
      lines: current.lines,
      event,
      data: data.length ? data.join("\n") : null,
    });
    current = null;
  }
  return out;
}

/** A line's field name and value (one leading space of the value dropped), as readers split it. */
export function sseField(line: string): [string, string] {
  const colon = line.indexOf(":");
  if (colon === -1) return [line, ""];
  let value = line.slice(colon + 1);
  if (value.startsWith(" ")) value = value.slice(1);
  return [line.slice(0, colon), value];
}

/** True for a `text/event-stream` Content-Type, parameters and case aside. */
export function isEventStream(contentType: string | null | undefined): boolean {
  return /^\s*text\/event-stream\s*(;|$)/i.test(contentType ?? "");
}
