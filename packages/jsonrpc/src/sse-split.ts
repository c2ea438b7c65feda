const LF = 10;
const CR = 13;

/**
 * Splits a `text/event-stream` into its events as raw bytes, each with its closing blank line,
 * for a reader that judges one event at a time and relays it byte for byte. Lines end with LF,
 * CRLF or CR, split anywhere across chunks; the concatenation of what `push` returns and what
 * `rest` holds is exactly the input. A LF that completes a CRLF blank line arriving in the next
 * chunk starts the next event's bytes (a reader skips it either way).
 *
 * Only the event being read is buffered, at most `maxEventBytes`: past it `over` turns true and
 * the splitter is spent (what it held is dropped).
 */
export class SseSplitter {
  #parts: Buffer[] = [];
  #size = 0;
  /** The last byte read ended a line (or nothing was read yet): a line end now is a blank line. */
  #lineStart = true;
  /** The last byte read was CR: a LF now completes its CRLF. */
  #cr = false;
  #over = false;

  constructor(private readonly maxEventBytes: number) {}

  /** Whether an event outgrew `maxEventBytes`. */
  get over(): boolean {
    return this.#over;
  }

  /** The events `chunk` closed, in order (none once `over`). */
  push(chunk: Buffer): Buffer[] {
    if (this.#over) return [];
    const out: Buffer[] = [];
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b !== LF && b !== CR) {
        this.#lineStart = false;
        this.#cr = false;
        continue;
      }
      if (b === LF && this.#cr) {
        this.#cr = false;
        continue;
      }
      this.#cr = b === CR;
      if (!this.#lineStart) {
        this.#lineStart = true;
        continue;
      }
      // A blank line: the event ends with it (and with the LF of its CRLF when it is here).
      if (this.#cr && chunk[i + 1] === LF) {
        i++;
        this.#cr = false;
      }
      if (this.#size + i + 1 - from > this.maxEventBytes) return this.#spent(out);
      this.#parts.push(chunk.subarray(from, i + 1));
      out.push(this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts));
      this.#parts = [];
      this.#size = 0;
      from = i + 1;
    }
    if (from < chunk.length) {
      this.#size += chunk.length - from;
      if (this.#size > this.maxEventBytes) return this.#spent(out);
      this.#parts.push(chunk.subarray(from));
    }
    return out;
  }

  #spent(out: Buffer[]): Buffer[] {
    this.#over = true;
    this.#parts = [];
    this.#size = 0;
    return out;
  }

  /** The bytes of an event no blank line closed yet (what a stream ending now leaves unsent). */
  rest(): Buffer {
    const rest = Buffer.concat(this.#parts);
    this.#parts = [];
    this.#size = 0;
    return rest;
  }
}
