import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { FrontendConfig } from '../../config/frontend-config';
import { DEFAULT_PRIORITY, isLowerPriority, PriorityClass } from '../../config/priority';
import { AdmissionPolicy, AdmissionRequest } from '../admission-policy';

const digest = (key: string): string => createHash('sha256').update(key).digest('base64');

/**
 * The bundled priority policy (`--priority-key-file`): each API key may use classes up to its
 * listed maximum; a request that claims a higher class is served as the key's maximum rather
 * than refused, so a client that always sends `critical` is not cut off, only judged with the
 * thresholds it is entitled to. A key that is not listed, or no key, may use up to `standard`:
 * without a listed key, the header can lower a request's class but not raise it. A key listed
 * as `sheddable` is served as sheddable even without the header.
 *
 * Keys are held as SHA-256 digests, so the policy keeps no key in memory after start.
 */
@Injectable()
export class PriorityByKeyPolicy extends AdmissionPolicy {
  readonly name = 'priority-by-key';
  private readonly maxByDigest = new Map<string, PriorityClass>();

  constructor(config: FrontendConfig) {
    super();
    for (const { key, max } of config.priorityKeys ?? []) this.maxByDigest.set(digest(key), max);
  }

  admit(request: AdmissionRequest): void {
    const max =
      request.apiKey === null
        ? DEFAULT_PRIORITY
        : (this.maxByDigest.get(digest(request.apiKey)) ?? DEFAULT_PRIORITY);
    if (isLowerPriority(max, request.priority)) request.lowerPriority(max);
  }
}
