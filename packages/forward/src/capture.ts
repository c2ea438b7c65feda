/** Keeps copies of the first `max` bytes of a body as it streams by, without holding the stream. */
export class Capture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}

  add(chunk: Buffer): void {
    if (this.size >= this.max) return;
    const room = this.max - this.size;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(Buffer.from(part));
    this.size += part.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}
