import { Dispatcher } from 'undici';
import { EngineAdapter, EngineSnapshot } from '../engines/engine-adapter';
import { UnparsableError } from '../engines/unparsable.error';
import { AnswerCache, ScrapeHttp } from '../http/engine-http.client';
import { ScrapeFailure } from '../http/scrape-failure';
import { Target } from '../targets/target';

export type ScrapeOutcome =
  | { readonly ok: true; readonly snapshot: EngineSnapshot; readonly at: number }
  | { readonly ok: false; readonly failure: ScrapeFailure; readonly at: number };

export interface ScraperSettings {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
}

export interface ScraperDeps {
  readonly adapter: EngineAdapter;
  readonly dispatcher: Dispatcher;
  readonly settings: ScraperSettings;
  readonly now: () => number;
  /** Called after every scrape that was not cut short by stop(). Must not throw. */
  readonly onOutcome: (target: Target, outcome: ScrapeOutcome) => void;
}

/**
 * Scrapes one target, one scrape at a time: the next starts `intervalMs` after the previous
 * started, or at once when it took longer. Each scrape has a whole deadline of `timeoutMs`
 * over all its requests, however the engine answers (or does not).
 */
export class TargetScraper {
  private timer: NodeJS.Timeout | undefined;
  private inflight: AbortController | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly cache = new AnswerCache();
  private readonly baseUrl: URL;

  constructor(
    readonly target: Target,
    private readonly deps: ScraperDeps,
  ) {
    this.baseUrl = new URL(target.url);
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops the loop and aborts the scrape in flight; resolves once it has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.inflight?.abort(new ScrapeFailure('error', 'bridge stopping'));
    await this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.tick();
    }, delayMs);
  }

  private async tick(): Promise<void> {
    const started = this.deps.now();
    const outcome = await this.scrapeOnce();
    if (this.stopped) return;
    if (!outcome.ok) this.cache.clear();
    this.deps.onOutcome(this.target, outcome);
    const elapsed = this.deps.now() - started;
    this.schedule(Math.max(0, this.deps.settings.intervalMs - elapsed));
  }

  private async scrapeOnce(): Promise<ScrapeOutcome> {
    const { settings, now } = this.deps;
    const controller = new AbortController();
    this.inflight = controller;
    const deadline = setTimeout(
      () =>
        controller.abort(
          new ScrapeFailure('timeout', `no complete answer within ${settings.timeoutMs} ms`),
        ),
      settings.timeoutMs,
    );
    const http = new ScrapeHttp({
      baseUrl: this.baseUrl,
      dispatcher: this.deps.dispatcher,
      signal: controller.signal,
      cache: this.cache,
      now,
      maxBodyBytes: settings.maxBodyBytes,
    });
    // The race guarantees the deadline even for an adapter that ignored the signal.
    const aborted = new Promise<never>((_, reject) =>
      controller.signal.addEventListener('abort', () => reject(asError(controller.signal.reason)), {
        once: true,
      }),
    );
    const work = Promise.resolve().then(() => this.deps.adapter.scrape(http));
    work.catch(() => undefined);
    aborted.catch(() => undefined);
    try {
      const snapshot = await Promise.race([work, aborted]);
      return { ok: true, snapshot, at: now() };
    } catch (err) {
      return { ok: false, failure: classify(err), at: now() };
    } finally {
      clearTimeout(deadline);
      this.inflight = undefined;
    }
  }
}

function classify(err: unknown): ScrapeFailure {
  if (err instanceof ScrapeFailure) return err;
  if (err instanceof UnparsableError) return new ScrapeFailure('unparsable', err.message);
  // Anything else came out of mapping what the engine sent (a shape no adapter expected).
  return new ScrapeFailure('unparsable', err instanceof Error ? err.message : String(err));
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new ScrapeFailure('timeout', String(reason));
}
