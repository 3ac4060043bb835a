/** The last bytes of a relayed SSE stream: enough to tell whether it ended between events. */
export class SseTail {
  private last: Buffer = Buffer.alloc(0);

  saw(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.last =
      chunk.length >= 4
        ? chunk.subarray(chunk.length - 4)
        : Buffer.concat([this.last, chunk]).subarray(-4);
  }

  get bytes(): Buffer {
    return this.last;
  }
}

const LF = 0x0a;
const CR = 0x0d;

/** Length of the line terminator (CRLF, LF or CR) `b` ends with at `end`, else 0. */
function terminatorBefore(b: Buffer, end: number): number {
  if (end >= 2 && b[end - 2] === CR && b[end - 1] === LF) return 2;
  if (end >= 1 && (b[end - 1] === LF || b[end - 1] === CR)) return 1;
  return 0;
}

/**
 * What to send before an event of our own so that it starts on a clean event boundary: nothing
 * when nothing was relayed or the stream ended with a blank line, `\n` when it ended a line,
 * `\n\n` when it stopped in the middle of a line. (The half event this completes is one the
 * worker began; a client sees it end where the worker broke off, then our error event.)
 */
export function sseBoundaryBefore(tail: SseTail): string {
  const b = tail.bytes;
  if (b.length === 0) return '';
  const first = terminatorBefore(b, b.length);
  if (first === 0) return '\n\n';
  return terminatorBefore(b, b.length - first) > 0 ? '' : '\n';
}
