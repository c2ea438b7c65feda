/**
 * One dispatched server-sent event. `event` is "message" when the stream named no type; `id` is
 * the last event id in force when the event was dispatched ("" when none was ever set).
 */
export type SseEvent = { event: string; data: string; id: string };

const LF = 10;
const CR = 13;

/**
 * Incremental parser for `text/event-stream` (WHATWG HTML, "Event stream interpretation"). Feed
 * it chunks as they arrive, split anywhere (inside a CRLF, inside a multi-byte UTF-8 character);
 * it returns the events each chunk completes. Lines end with LF, CRLF or CR; `:` lines are
 * comments; multi-line `data:` is joined with LF; `id` persists across events as the spec's last
 * event id. An event still open when the stream ends is discarded, as the spec requires.
 *
 * Only the current line is ever buffered, and only newly arrived text is scanned, so a long line
 * fed in small chunks costs linear time.
 */
export class SseParser {
  #decoder = new TextDecoder("utf-8");
  #line = "";
  /** The previous chunk ended in CR: a LF that starts the next one belongs to that CRLF. */
  #skipLf = false;
  #data: string[] = [];
  #event = "";
  #lastEventId = "";
  #retryMs: number | undefined;

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
    const text = this.#decoder.decode(chunk, { stream: true });
    return this.#feed(text);
  }

  /** Ends the stream: flushes the decoder and drops an event that no blank line closed. */
  end(): SseEvent[] {
    const events = this.#feed(this.#decoder.decode());
    this.#line = "";
    this.#data = [];
    this.#event = "";
    return events;
  }

  #feed(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.#skipLf && text.length > 0) {
      if (text.charCodeAt(0) === LF) start = 1;
      this.#skipLf = false;
    }
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== LF && c !== CR) continue;
      const line = this.#line + text.slice(start, i);
      this.#line = "";
      if (c === CR) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === LF) i++;
        } else {
          this.#skipLf = true;
        }
      }
      start = i + 1;
      const event = this.#processLine(line);
      if (event) events.push(event);
    }
    this.#line += text.slice(start);
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
    // A blank line with no data line dispatches nothing (a `retry:` or `id:`-only block).
    if (data.length === 0) return undefined;
    return { event: event || "message", data: data.join("\n"), id: this.#lastEventId };
  }
}
