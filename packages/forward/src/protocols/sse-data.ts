import { SseParser } from "@gw/jsonrpc";

const LF = 0x0a;
/** A position not looked for yet (-1: looked for, and not there). */
const UNSEARCHED = -2;

/** ASCII strings one of which an event must hold to matter (an event's bytes hold them as its text does). */
export type Needles = { readonly texts: readonly string[] };

export function needles(...texts: string[]): Needles {
  if (texts.some((t) => /[^\x20-\x7e]/.test(t))) throw new TypeError("needles are printable ASCII");
  return { texts };
}

/** Where the events a reader finds go, and which of them may be passed over unread. */
export type EventSink = {
  /** What an event must hold to matter now (asked before each event); null: every event matters. */
  needles(): Needles | null;
  /** The data of one event that may matter (never empty), in the stream's order. */
  event(data: string): void;
};

/**
 * Reads the data of an SSE answer's events from its chunks, for a learner that wants few of them
 * (result-learner.ts): the data `SseParser` dispatches, in the same order, and the same
 * `FrameTooLargeError` past the cap, without decoding what it does not want. A blank line that
 * ends with a LF (`\n\n`, `\r\n\r\n`) always closes an event and leaves a parser holding nothing,
 * so the bytes between two such blank lines are one event or a few, read on their own: passed
 * over unread when they hold none of the sink's needles (each event's data is a piece of them),
 * read natively when they are one `data:` line (the usual event), and given to the parser
 * otherwise, as is everything up to the next such blank line (an event split across chunks, a
 * stream that ends its lines with CR alone, one that opens with a byte order mark).
 *
 * A chunk is searched as Latin-1 text, one character per byte, so that positions are byte offsets
 * and the searches are the engine's string searches (a Buffer's `indexOf` crosses into C++ at each
 * call, which cost more than the search itself on events of a few hundred bytes). Only an event's
 * data that is read is decoded as UTF-8.
 */
export class SseDataReader {
  readonly #max: number;
  readonly #sink: EventSink;
  #parser: SseParser | null = null;
  /** Nothing read yet: a stream that opens with a byte order mark is read by the parser alone. */
  #first = true;
  #plain = true;
  /** The last byte read ended such a blank line (or nothing was read): no event is open. */
  #between = true;
  /** The chunk being read, as Latin-1, and the next position of each thing looked for in it. */
  #text = "";
  #lf = -1;
  #crlf = -1;
  #cr = -1;
  #found: number[] = [];
  #needles: Needles | null = null;

  constructor(maxEventBytes: number, sink: EventSink) {
    this.#max = maxEventBytes;
    this.#sink = sink;
  }

  /** Reads the next chunk (throws `FrameTooLargeError` as the parser does). */
  push(chunk: Buffer): void {
    const n = chunk.length;
    if (n === 0) return;
    if (this.#first) {
      this.#first = false;
      // The parser drops a mark that opens the stream: it reads such a stream whole.
      this.#plain = chunk[0] !== 0xef;
    }
    if (!this.#plain) {
      this.#parse(chunk);
      return;
    }
    try {
      this.#read(chunk);
    } finally {
      // A stream may idle long between chunks: its last chunk's text is not kept meanwhile.
      this.#text = "";
    }
  }

  #read(chunk: Buffer): void {
    const n = chunk.length;
    const text = chunk.toString("latin1");
    this.#text = text;
    this.#lf = text.indexOf("\n\n");
    this.#crlf = text.indexOf("\r\n\r\n");
    this.#cr = UNSEARCHED;
    this.#needles = null;
    let at = 0;
    if (!this.#between) {
      // The open event ends at the first blank line: the parser, which holds its start, reads it.
      at = this.#next(0);
      if (at === -1) {
        this.#parse(chunk);
        return;
      }
      this.#parse(at === n ? chunk : chunk.subarray(0, at));
      this.#between = true;
    }
    while (at < n) {
      const end = this.#next(at);
      if (end === -1) {
        this.#between = false;
        this.#parse(chunk.subarray(at));
        return;
      }
      this.#block(chunk, at, end);
      at = end;
    }
  }

  /** The end of the first blank line (of either kind) that ends at or after `from`; -1: none. */
  #next(from: number): number {
    if (this.#lf !== -1 && this.#lf < from) this.#lf = this.#text.indexOf("\n\n", from);
    if (this.#crlf !== -1 && this.#crlf < from) this.#crlf = this.#text.indexOf("\r\n\r\n", from);
    const lf = this.#lf === -1 ? -1 : this.#lf + 2;
    const crlf = this.#crlf === -1 ? -1 : this.#crlf + 4;
    return lf === -1 ? crlf : crlf === -1 || lf < crlf ? lf : crlf;
  }

  /** One event or a few: the bytes `[s, e)` of the chunk, from after a blank line to the end of the next. */
  #block(chunk: Buffer, s: number, e: number): void {
    // The parser counts what an event holds in UTF-8 of its decoded text, at most 3 bytes for each
    // byte read: a block within a third of the cap cannot pass it, a larger one goes to the parser.
    if (3 * (e - s) > this.#max) {
      this.#parse(chunk.subarray(s, e));
      return;
    }
    const wanted = this.#sink.needles();
    if (wanted !== null && !this.#holds(wanted, s, e)) return;
    const data = this.#dataLine(chunk, s, e);
    if (data === null) {
      this.#parse(chunk.subarray(s, e));
      return;
    }
    if (data !== "") this.#sink.event(data);
  }

  /** Whether `[s, e)` holds one of the needles (each looked for once per chunk, onwards). */
  #holds(wanted: Needles, s: number, e: number): boolean {
    if (wanted !== this.#needles) {
      this.#needles = wanted;
      this.#found = wanted.texts.map(() => UNSEARCHED);
    }
    const found = this.#found;
    for (let i = 0; i < found.length; i++) {
      const needle = wanted.texts[i] as string;
      let at = found[i] as number;
      if (at === UNSEARCHED || (at !== -1 && at < s)) at = found[i] = this.#text.indexOf(needle, s);
      if (at !== -1 && at + needle.length <= e) return true;
    }
    return false;
  }

  /**
   * The data of a block that is one `data:` line and its blank line, decoded; null for any other
   * block. What follows the colon, less one leading space, is the data, as the parser reads it
   * (the byte before it is ASCII, so decoding from there gives the same text).
   */
  #dataLine(chunk: Buffer, s: number, e: number): string | null {
    const text = this.#text;
    if (this.#cr === UNSEARCHED || (this.#cr !== -1 && this.#cr < s)) this.#cr = text.indexOf("\r", s);
    const lf = text.indexOf("\n", s);
    const cr = this.#cr;
    const stop = cr === -1 || lf < cr ? lf : cr;
    const rest = e - stop;
    const oneLine =
      text.charCodeAt(stop) === LF ? rest === 2 : rest === 4 && text.startsWith("\r\n\r\n", stop);
    if (!oneLine || stop < s + 5 || !text.startsWith("data:", s)) return null;
    const from = stop > s + 5 && text.charCodeAt(s + 5) === 0x20 ? s + 6 : s + 5;
    return chunk.toString("utf8", from, stop);
  }

  #parse(bytes: Buffer): void {
    if (this.#parser === null) {
      this.#parser = new SseParser({ maxEventBytes: this.#max });
      // Taking over after events were read natively: a blank line first, which dispatches nothing
      // between events but tells the parser the stream began (a U+FEFF now is data, not a mark).
      if (this.#plain) this.#parser.push(BLANK);
    }
    for (const e of this.#parser.push(bytes)) if (e.data !== "") this.#sink.event(e.data);
  }
}

const BLANK = Buffer.from("\n");
