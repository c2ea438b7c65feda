import { FrameTooLargeError, isRecord, parseJson } from "@gw/jsonrpc";
import { type Needles, SseDataReader } from "./sse-data.ts";

/**
 * Learns from a JSON-RPC answer as it passes, chunk by chunk, after each chunk was delivered: it
 * never holds the answer back. An SSE answer is read event by event (`SseDataReader`; an event
 * past `maxEvent` ends the learning of that stream; one cut off by the stream's end teaches
 * nothing); a JSON answer is kept up to `maxJson` bytes (a larger one teaches nothing) and read
 * once, when the facts are asked. Each JSON-RPC `result` found goes to `learn` (A2A's task fields,
 * MCP's task fields).
 *
 * `watch`, when given, says from what was learned which events can still teach: null, every one
 * (each is parsed at once); else only those holding one of its needles, and of them only the
 * `latest` field, which the last event to set it decides (A2A's task state). An event without a
 * needle is passed over unread (the reader does not even decode it); one with a needle is kept
 * unparsed, and only the last of them that sets `latest` is parsed (when the facts are asked,
 * before an event that must be parsed at once, or when a few are kept), newest first. Parsing
 * every event was most of an SSE answer's learning cost.
 */
export type Watch<T> = (learned: T) => Needles | null;

/** Kept events past these are settled at once (parsed newest first until one teaches). */
const KEPT_EVENTS = 8;
const KEPT_CHARS = 64 * 1024;

export class ResultLearner<T extends object> {
  readonly #learned: T;
  readonly #learn: (result: unknown, into: T) => void;
  readonly #sse: SseDataReader | null;
  readonly #maxJson: number;
  readonly #watch: Watch<T> | null;
  readonly #latest: keyof T | null;
  #chunks: Buffer[] | null = [];
  #size = 0;
  /** Events holding a needle, not parsed yet, oldest first, and their length. */
  #kept: string[] = [];
  #keptChars = 0;

  constructor(
    opts: { stream: boolean; maxJson: number; maxEvent: number },
    learned: T,
    learn: (result: unknown, into: T) => void,
    watch: Watch<T> | null = null,
    /** The field an event holding a needle can set (the one the last event to set it decides). */
    latest: keyof T | null = null,
  ) {
    this.#watch = latest === null ? null : watch;
    this.#latest = latest;
    this.#learned = learned;
    this.#learn = learn;
    this.#maxJson = opts.maxJson;
    this.#sse = opts.stream
      ? new SseDataReader(opts.maxEvent, {
          needles: () => (this.#watch === null ? null : this.#watch(this.#learned)),
          event: (data) => this.#event(data),
        })
      : null;
  }

  add(chunk: Buffer): void {
    if (this.#chunks === null) return;
    if (this.#sse) {
      try {
        this.#sse.push(chunk);
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

  /** One event's data, from the reader. */
  #event(data: string): void {
    const wanted = this.#watch === null ? null : this.#watch(this.#learned);
    if (wanted === null) {
      this.#settle();
      this.#message(data, this.#learned);
      return;
    }
    if (!wanted.texts.some((t) => data.includes(t))) return;
    this.#kept.push(data);
    this.#keptChars += data.length;
    if (this.#kept.length >= KEPT_EVENTS || this.#keptChars > KEPT_CHARS) this.#settle();
  }

  /**
   * The kept events, newest first, until one sets the field: the older ones could only have set
   * what it replaces. Nothing else is learned from them (they were kept only once the rest was
   * known).
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
