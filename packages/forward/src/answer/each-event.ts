import type { BodySink, RelaySource } from "@gw/upstream";
import type { Answer, EventTransform } from "../protocols/protocol.ts";

/**
 * The head of an answer sent through a per-event transform: its length is no longer known (the
 * events may change) and its body is sent decoded, so Content-Length and Content-Encoding go; a
 * stream's head is then sent at once, before its first event is judged.
 */
export function eachEventHead(head: Answer): Answer {
  const { "content-length": _l, "content-encoding": _e, ...headers } = head.headers;
  return { ...head, headers };
}

/**
 * A relayed answer whose body is the transform's output, with backpressure: the upstream read
 * pauses while a chunk is judged and while the caller is slow. An upstream that breaks off still
 * breaks the relay (its partial event is dropped); a stream the transform ended abandons the
 * upstream and ends the caller's answer cleanly.
 */
export function eachEventSource(answer: RelaySource, each: EventTransform): RelaySource {
  return new EachEvent(answer, each);
}

class EachEvent implements RelaySource, BodySink {
  #sink: BodySink | null = null;
  /** Chunks are judged one after the other, in order. */
  #queue: Promise<void> = Promise.resolve();
  #judging = false;
  #stopped = false;

  constructor(
    private readonly answer: RelaySource,
    private readonly each: EventTransform,
  ) {}

  relayTo(sink: BodySink): void {
    this.#sink = sink;
    this.answer.relayTo(this);
  }

  resume(): void {
    if (!this.#judging && !this.#stopped) this.answer.resume();
  }

  abandon(e?: Error): void {
    this.#stopped = true;
    this.answer.abandon(e);
  }

  data(chunk: Buffer): boolean {
    this.#judging = true;
    this.#then(async (sink) => {
      const step = await this.each.push(chunk);
      if (this.#stopped) return;
      const room = step.out.length > 0 ? sink.data(step.out) : true;
      this.#judging = false;
      if (step.end) {
        this.abandon();
        sink.end();
      } else if (room) this.answer.resume();
      // else: the caller is slow; its drain calls `resume`.
    });
    return false;
  }

  end(): void {
    this.#then((sink) => {
      const rest = this.each.end(true);
      if (rest.length > 0) sink.data(rest);
      sink.end();
    });
  }

  error(e: Error): void {
    this.#then((sink) => {
      this.each.end(false);
      sink.error(e);
    });
  }

  #then(next: (sink: BodySink) => void | Promise<void>): void {
    this.#queue = this.#queue.then(async () => {
      const sink = this.#sink;
      if (this.#stopped || sink === null) return;
      try {
        await next(sink);
      } catch (e) {
        // A transform that threw: the stream is cut, as an upstream that broke off would be.
        this.abandon();
        sink.error(e instanceof Error ? e : new Error(String(e)));
      }
    });
  }
}

/** A collected answer (read whole already) through the transform, as a relayed one would be. */
export async function eachEventWhole(answer: Answer, each: EventTransform): Promise<Answer> {
  const head = eachEventHead(answer);
  if (answer.body === null) return { ...head, body: each.refused() };
  const step = await each.push(answer.body);
  const rest = step.end ? Buffer.alloc(0) : each.end(true);
  return { ...head, body: Buffer.concat([step.out, rest]) };
}
