import { SignalGap, SignalGapKind } from './engines/engine-adapter';
import { ScrapeResult } from './http/scrape-failure';
import { TargetScraper } from './scrape/target-scraper';
import { Target } from './targets/target';

/** `unknown` until the first answer; `down` once worker_down went out. */
export type WorkerState = 'unknown' | 'up' | 'down';

/** One scraped engine as the bridge tracks it. */
export interface ScrapedWorker {
  readonly target: Target;
  readonly scraper: TargetScraper;
  state: WorkerState;
  /** Last successful scrape, or when the target was added. */
  lastOkAt: number;
  lastReportAt: number | null;
  lastResult: ScrapeResult | null;
  lastError: string | null;
  model: string | null;
  dpSize: number;
  /** What the engine's newest good answer could not tell. */
  signalGaps: readonly SignalGap[];
  /** Kinds already logged for this worker (each is logged once). */
  readonly loggedGaps: Set<SignalGapKind>;
}

/** A worker as a status page shows it (`EngineBridge.status()`). */
export interface BridgeWorkerStatus {
  readonly workerId: string;
  readonly engine: string;
  readonly url: string;
  readonly model: string | null;
  readonly dpSize: number;
  readonly up: boolean;
  readonly state: WorkerState;
  /** When the newest published report was measured (epoch ms). */
  readonly lastReportAtMs: number | null;
  readonly lastResult: ScrapeResult | null;
  readonly lastError: string | null;
  /** What the engine's newest good answer could not tell, and why (see SignalGap). */
  readonly signalGaps: readonly SignalGap[];
}
