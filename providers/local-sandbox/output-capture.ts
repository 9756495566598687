/**
 * One output stream of a cell: keeps at most `cap` bytes, and watches for the end-of-cell token even in the
 * bytes it drops (the token may also arrive split across chunks).
 */
export class CappedCapture {
  private chunks: Buffer[] = [];
  private kept = 0;
  private tail = Buffer.alloc(0);
  truncated = false;
  done = false;

  constructor(
    private readonly cap: number,
    private readonly token: Buffer,
  ) {}

  /** Feed bytes; true once the token has been seen. */
  push(chunk: Buffer): boolean {
    if (this.done) return true;
    const joined = Buffer.concat([this.tail, chunk]);
    const at = joined.indexOf(this.token);
    const usable =
      at >= 0 ? joined.subarray(0, at) : joined.subarray(0, Math.max(0, joined.length - (this.token.length - 1)));
    this.keep(usable);
    if (at >= 0) {
      this.done = true;
      this.tail = Buffer.alloc(0);
      return true;
    }
    this.tail = Buffer.from(joined.subarray(usable.length));
    return false;
  }

  /** What was kept, plus any held-back tail when the stream ended without a token (the interpreter died). */
  text(): string {
    if (!this.done && this.tail.length) {
      this.keep(this.tail);
      this.tail = Buffer.alloc(0);
    }
    return Buffer.concat(this.chunks).toString('utf8');
  }

  private keep(bytes: Buffer): void {
    const room = this.cap - this.kept;
    if (bytes.length > room) this.truncated = true;
    const part = bytes.subarray(0, Math.max(0, room));
    if (part.length) {
      this.chunks.push(Buffer.from(part));
      this.kept += part.length;
    }
  }
}
