import { Injectable, Logger } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { ThresholdRepository } from '../thresholds/persistence';
import { ThresholdSyncService } from '../thresholds/threshold-sync.service';
import { BusStateService } from '../worker-monitor/bus-state.service';
import { LifecycleService } from '../admission/lifecycle.service';

const PING_TIMEOUT_MS = 1000;

/** Readiness inputs: the bus connection, the threshold database, and whether we are draining. */
@Injectable()
export class HealthIndicators {
  /**
   * The ping in flight, shared by every probe that comes meanwhile: against a hung database each
   * probe would otherwise hold one more pooled connection until the query deadline.
   */
  private ping: Promise<void> | null = null;
  private readonly logger = new Logger('Health');
  private lastLoggedMs = 0;

  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly bus: BusStateService,
    private readonly repository: ThresholdRepository,
    private readonly lifecycle: LifecycleService,
    private readonly sync: ThresholdSyncService,
  ) {}

  /**
   * Thresholds loaded at least once: before that, admission would run on the global flags
   * alone. After it, a database outage only freezes them at their last values (still ready).
   */
  thresholdsLoaded(): HealthIndicatorResult<'thresholds'> {
    const check = this.indicators.check('thresholds');
    return this.sync.loadedOnce ? check.up() : check.down({ message: 'not loaded yet' });
  }

  busHealth(): HealthIndicatorResult<'bus'> {
    const state = this.bus.state;
    const check = this.indicators.check('bus');
    return state === 'disconnected' ? check.down({ state }) : check.up({ state });
  }

  async databaseHealth(): Promise<HealthIndicatorResult<'database'>> {
    const check = this.indicators.check('database');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)),
        PING_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([this.sharedPing(), timeout]);
      return check.up();
    } catch (err) {
      // /health answers anyone: the driver's text can name hosts, users and databases, so it
      // goes to the log (at most every 10 s) and the probe says only that the database is down.
      const now = Date.now();
      if (now - this.lastLoggedMs >= 10_000) {
        this.lastLoggedMs = now;
        this.logger.warn(`threshold database ping failed: ${String(err)}`);
      }
      return check.down({ message: 'the threshold database does not answer' });
    } finally {
      clearTimeout(timer);
    }
  }

  private sharedPing(): Promise<void> {
    this.ping ??= this.repository.ping().finally(() => {
      this.ping = null;
    });
    return this.ping;
  }

  serving(): HealthIndicatorResult<'serving'> {
    const check = this.indicators.check('serving');
    return this.lifecycle.draining ? check.down({ message: 'shutting down' }) : check.up();
  }
}
