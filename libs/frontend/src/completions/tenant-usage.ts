import { Transform, TransformCallback } from 'node:stream';
import { TenantCharge, usageIn } from '../tenants/tenant-charge';

/** Larger unary answers are searched for `usage` in their last bytes only, where it sits. */
const WHOLE_SEARCH_BYTES = 64 * 1024;

/** Settles a tenant's charge with the usage a whole (unary) answer reports. */
export function settleWhole(charge: TenantCharge, body: string | Buffer): void {
  const tail =
    typeof body === 'string'
      ? body.slice(-WHOLE_SEARCH_BYTES)
      : body.subarray(Math.max(0, body.length - WHOLE_SEARCH_BYTES)).toString('utf8');
  const usage = usageIn(tail);
  charge.usage(usage?.prompt ?? null, usage?.completion ?? null);
}

/**
 * Passes a streamed unary answer through, keeping only its last WHOLE_SEARCH_BYTES: its usage
 * is read from them at the end, as `settleWhole` reads a whole answer's.
 */
export class UsageTail extends Transform {
  private chunks: Buffer[] = [];
  private bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes - this.chunks[0].length >= WHOLE_SEARCH_BYTES) {
      this.bytes -= this.chunks[0].length;
      this.chunks.shift();
    }
    done(null, chunk);
  }

  settle(charge: TenantCharge): void {
    settleWhole(charge, Buffer.concat(this.chunks));
    this.chunks = [];
  }
}

/**
 * The usage of a streamed answer: the `usage` of its last event when the worker sends one
 * (`stream_options.include_usage`), else one completion token per data event.
 */
export class StreamUsage {
  private events = 0;
  private reported: { prompt: number; completion: number | null } | null = null;

  see(events: Buffer): void {
    const text = events.toString('utf8');
    for (let at = text.indexOf('data:'); at !== -1; at = text.indexOf('data:', at + 5)) {
      if (!text.startsWith('data: [DONE]', at)) this.events++;
    }
    if (text.includes('"usage"')) this.reported = usageIn(text) ?? this.reported;
  }

  settle(charge: TenantCharge): void {
    charge.usage(this.reported?.prompt ?? null, this.reported?.completion ?? this.events);
  }
}
