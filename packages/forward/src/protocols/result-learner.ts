import { FrameTooLargeError, isRecord, parseJson, SseParser } from "@gw/jsonrpc";

/**
 * Learns from a JSON-RPC answer as it passes, chunk by chunk, after each chunk was delivered: it
 * never holds the answer back. An SSE answer is parsed event by event (an event past `maxEvent`
 * ends the learning of that stream; one cut off by the stream's end teaches nothing); a JSON answer
 * is kept up to `maxJson` bytes (a larger one teaches nothing) and read once, when the facts are
 * asked. Each JSON-RPC `result` found goes to `learn` (A2A's task fields, MCP's task fields).
 * `mayTeach`, when given, is asked first for each SSE event's data: an event it rules out is not
 * parsed (JSON.parse of every event was most of an SSE answer's learning cost).
 */
export class ResultLearner<T extends object> {
  readonly #learned: T;
  readonly #learn: (result: unknown, into: T) => void;
  readonly #sse: SseParser | null;
  readonly #maxJson: number;
  readonly #mayTeach: ((data: string, learned: T) => boolean) | null;
  #chunks: Buffer[] | null = [];
  #size = 0;

  constructor(
    opts: { stream: boolean; maxJson: number; maxEvent: number },
    learned: T,
    learn: (result: unknown, into: T) => void,
    mayTeach: ((data: string, learned: T) => boolean) | null = null,
  ) {
    this.#mayTeach = mayTeach;
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
          if (e.data !== "" && (this.#mayTeach === null || this.#mayTeach(e.data, this.#learned)))
            this.#message(e.data);
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
    if (this.#chunks !== null && this.#sse === null) {
      const chunks = this.#chunks;
      this.#chunks = null;
      // One chunk (the usual small answer) is read as it is: no copy into a new buffer first.
      const one = chunks.length === 1 ? (chunks[0] as Buffer) : null;
      if (chunks.length > 0) this.#message((one ?? Buffer.concat(chunks)).toString("utf8"));
    }
    return this.#learned;
  }

  #message(text: string): void {
    const msg = parseJson(text);
    if (isRecord(msg) && "result" in msg) this.#learn(msg.result, this.#learned);
  }
}
