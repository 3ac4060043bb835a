import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { BusySpells } from '../worker-monitor/busy-spells';

/** docs/operations.md#rolling-out-shedding: the measured `Retry-After` is a whole number of seconds in [1, 60]. */
export const RETRY_AFTER_MIN_SECS = 1;
export const RETRY_AFTER_MAX_SECS = 60;

/** The header's text for each whole second, made once: a 503 allocates no string. */
const SECONDS = Array.from({ length: RETRY_AFTER_MAX_SECS + 1 }, (_, s) => String(s));

/**
 * `Retry-After` in whole seconds for an expected wait: rounded up (coming back early is a
 * certain second 503), clamped to [1, 60]; 1 with no estimate yet.
 */
export function retryAfterSecsFor(waitMs: number | undefined): number {
  if (waitMs === undefined) return RETRY_AFTER_MIN_SECS;
  const secs = Math.ceil(waitMs / 1000);
  return Math.min(RETRY_AFTER_MAX_SECS, Math.max(RETRY_AFTER_MIN_SECS, secs));
}

/**
 * The `Retry-After` value of a rejection (`--retry-after-secs`): the configured seconds (0: no
 * header), or with `auto` the frontend's estimate of when a worker of the model will be free
 * (BusySpells), per request.
 */
@Injectable()
export class RetryAfter {
  private readonly auto: boolean;
  private readonly fixed: string | null;

  constructor(
    config: FrontendConfig,
    private readonly spells: BusySpells,
  ) {
    const secs = config.retryAfterSecs;
    this.auto = secs === 'auto';
    this.fixed = secs !== 'auto' && secs > 0 ? String(secs) : null;
  }

  /** The header for a rejection of a request for `model`; null: send none. */
  of(model: unknown): string | null {
    if (!this.auto) return this.fixed;
    const waitMs =
      typeof model === 'string' ? this.spells.expectedWaitMs(model, Date.now()) : undefined;
    return SECONDS[retryAfterSecsFor(waitMs)];
  }
}
