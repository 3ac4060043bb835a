const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits a relayed SSE stream into whole events (WHATWG HTML, "Server-sent events": a line ends
 * with CRLF, LF or CR, and a blank line ends an event), so that only whole events reach the
 * client. What follows the last blank line is held; when the worker's stream stops there,
 * `partial` says an event was cut and the relay drops it: a half event completed by anyone but
 * the worker is broken JSON to the client's parser.
 */
export class SseEvents {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The line being read has no character yet (a terminator here makes it blank). */
  private lineEmpty = true;
  /** The last byte read was a CR: an LF right after it belongs to the same terminator. */
  private afterCr = false;
  /** That CR ended an event, so its LF goes out with the event. */
  private crEndedEvent = false;

  /** Bytes held: the event begun but not yet ended. */
  get pendingBytes(): number {
    return this.heldBytes;
  }

  /** Whether the stream, if it ended now, would end inside an event. */
  get partial(): boolean {
    return this.heldBytes > 0;
  }

  /** The whole events `chunk` completes (with what was held before it), or null for none. */
  push(chunk: Buffer): Buffer | null {
    let end = -1;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (this.afterCr) {
        this.afterCr = false;
        if (b === LF) {
          if (this.crEndedEvent) end = i + 1;
          continue;
        }
      }
      if (b === CR || b === LF) {
        if (this.lineEmpty) end = i + 1;
        this.crEndedEvent = b === CR && this.lineEmpty;
        this.afterCr = b === CR;
        this.lineEmpty = true;
      } else {
        this.lineEmpty = false;
      }
    }
    if (end < 0) {
      this.hold(chunk);
      return null;
    }
    const out = this.held.length === 0 ? chunk.subarray(0, end) : this.take(chunk, end);
    this.held = [];
    this.heldBytes = 0;
    if (end < chunk.length) this.hold(chunk.subarray(end));
    return out;
  }

  private hold(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.held.push(bytes);
    this.heldBytes += bytes.length;
  }

  private take(chunk: Buffer, end: number): Buffer {
    return Buffer.concat([...this.held, chunk.subarray(0, end)]);
  }
}
