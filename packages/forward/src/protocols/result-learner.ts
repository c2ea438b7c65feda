import { FrameTooLargeError, isRecord, parseJson, SseParser } from "@gw/jsonrpc";

/**
 * Learns from a JSON-RPC answer as it passes, chunk by chunk, after each chunk was delivered: it
 * never holds the answer back. An SSE answer is parsed event by event (an event past `maxEvent`
 * ends the learning of that stream; one cut off by the stream's end teaches nothing); a JSON answer
 * is kept up to `maxJson` bytes (a larger one teaches nothing) and read once, when the facts are
 * asked. Each JSON-RPC `result` found goes to `learn` (A2A's task fields, MCP's task fields).
 * `mayTeach`, when given, is asked first for each SSE event's data: an event it rules out is not
 * parsed (JSON.parse of every event was most of an SSE answer's learning cost). It may also say
 * that an event can only replace what a later one would (`"latest"`: A2A's task state, of which
 * the last wins): such events are kept unparsed, and only the last of them that sets `latest`
 * is parsed (when the facts are asked, before an event that must be parsed at once, or when a few
 * are kept), newest first.
 */
export type EventWorth = boolean | "latest";

/** Kept events past these are settled at once (parsed newest first until one teaches). */
const KEPT_EVENTS = 8;
const KEPT_CHARS = 64 * 1024;

export class ResultLearner<T extends object> {
  readonly #learned: T;
  readonly #learn: (result: unknown, into: T) => void;
  readonly #sse: SseParser | null;
  readonly #maxJson: number;
  readonly #mayTeach: ((data: string, learned: T) => EventWorth) | null;
  readonly #latest: keyof T | null;
  #chunks: Buffer[] | null = [];
  #size = 0;
  /** `"latest"` events not parsed yet, oldest first, and their length. */
  #kept: string[] = [];
  #keptChars = 0;

  constructor(
    opts: { stream: boolean; maxJson: number; maxEvent: number },
    learned: T,
    learn: (result: unknown, into: T) => void,
    mayTeach: ((data: string, learned: T) => EventWorth) | null = null,
    /** The field a `"latest"` event can set (the one the last event to set it decides). */
    latest: keyof T | null = null,
  ) {
    this.#mayTeach = mayTeach;
    this.#latest = latest;
    this.#learned = learned;
    this.#learn = learn;
    this.#maxJson = opts.maxJson;
    this.#sse = opts.stream ? new SseParser({ maxEventBytes: opts.maxEvent }) : null;
  }

  add(chunk: Buffer): void {
    if (this.#chunks === null) return;
    if (this.#sse) {
      try {
        for (const e of this.#sse.push(chunk)) {
          if (e.data === "") continue;
          const worth = this.#mayTeach === null ? true : this.#mayTeach(e.data, this.#learned);
          if (worth === false) continue;
          if (worth === "latest" && this.#latest !== null) {
            this.#kept.push(e.data);
            this.#keptChars += e.data.length;
            if (this.#kept.length >= KEPT_EVENTS || this.#keptChars > KEPT_CHARS) this.#settle();
            continue;
          }
          this.#settle();
          this.#message(e.data, this.#learned);
        }
      } catch (e) {
        // An event past the cap: the rest of this stream is not learned from.
        if (!(e instanceof FrameTooLargeError)) throw e;
        this.#chunks = null;
      }
      return;
    }
    this.#size += chunk.length;
    if (this.#size > this.#maxJson) this.#chunks = null;
    else this.#chunks.push(chunk);
  }

  /** What was learned so far (a JSON answer is read now, once). */
  facts(): T {
    this.#settle();
    if (this.#chunks !== null && this.#sse === null) {
      const chunks = this.#chunks;
      this.#chunks = null;
      // One chunk (the usual small answer) is read as it is: no copy into a new buffer first.
      const one = chunks.length === 1 ? (chunks[0] as Buffer) : null;
      if (chunks.length > 0) this.#message((one ?? Buffer.concat(chunks)).toString("utf8"), this.#learned);
    }
    return this.#learned;
  }

  /**
   * The kept `"latest"` events, newest first, until one sets the field: the older ones could only
   * have set what it replaces. Nothing else is learned from them (they were kept only once the
   * rest was known).
   */
  #settle(): void {
    if (this.#kept.length === 0) return;
    const kept = this.#kept;
    const key = this.#latest as keyof T;
    this.#kept = [];
    this.#keptChars = 0;
    for (let i = kept.length - 1; i >= 0; i--) {
      const into = {} as T;
      this.#message(kept[i] as string, into);
      if (into[key] !== undefined) {
        this.#learned[key] = into[key];
        return;
      }
    }
  }

  #message(text: string, into: T): void {
    const msg = parseJson(text);
    if (isRecord(msg) && "result" in msg) this.#learn(msg.result, into);
  }
}
