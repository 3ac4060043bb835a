import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { FrontendConfig } from '../../config/frontend-config';
import { AdmissionPolicy, AdmissionRejectedError, AdmissionRequest } from '../admission-policy';

/**
 * The bundled example policy (`--max-inflight-per-key N`): at most N requests in flight per
 * API key, so one client cannot take every worker slot. Keys are held as SHA-256 digests and
 * forgotten when their count drops to zero, so memory is bounded by the keys in flight.
 */
@Injectable()
export class InflightPerKeyPolicy extends AdmissionPolicy {
  readonly name = 'inflight-per-key';
  private readonly limit: number;
  private readonly inflight = new Map<string, number>();

  constructor(config: FrontendConfig) {
    super();
    this.limit = config.maxInflightPerKey ?? Number.MAX_SAFE_INTEGER;
  }

  admit(request: AdmissionRequest): void {
    const key =
      request.apiKey === null ? '' : createHash('sha256').update(request.apiKey).digest('base64');
    const count = this.inflight.get(key) ?? 0;
    if (count >= this.limit) {
      throw new AdmissionRejectedError(
        `Too many requests in flight for this API key (limit ${this.limit}), please retry later`,
      );
    }
    this.inflight.set(key, count + 1);
    request.onFinish(() => {
      const left = (this.inflight.get(key) ?? 1) - 1;
      if (left <= 0) this.inflight.delete(key);
      else this.inflight.set(key, left);
    });
  }

  /** Requests in flight for keys with at least one (for tests and the status page). */
  trackedKeys(): number {
    return this.inflight.size;
  }
}
