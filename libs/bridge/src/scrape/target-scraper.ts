import { Dispatcher } from 'undici';
import { EngineAdapter, EngineSnapshot } from '../engines/engine-adapter';
import { UnparsableError } from '../unparsable.error';
import { AnswerCache, ScrapeHttp } from '../http/engine-http.client';
import { ScrapeFailure } from '../http/scrape-failure';
import { Target } from '../targets/target';
import { ScrapeSlots } from './scrape-slots';

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
  /** Shared by the bridge's scrapers: a scrape sends its requests once it holds a slot. */
  readonly slots?: ScrapeSlots;
  /** In [0, 1): where in its first interval the target's first scrape starts. */
  readonly random?: () => number;
  /** Called after every scrape that was not cut short by stop(). Must not throw. */
  readonly onOutcome: (target: Target, outcome: ScrapeOutcome) => void;
}

/**
 * Scrapes one target, one scrape at a time, on a fixed cadence: the first scrape starts at a
 * random offset within the first interval (so that many targets do not all start at once) and
 * every next one on that target's own grid of ticks, `intervalMs` apart. A tick that passes
 * while a scrape is still running (or while the bridge's event loop was too busy to fire it) is
 * skipped, never made up: a slow or timed-out scrape is not followed by another at once.
 * Each scrape has a whole deadline of `timeoutMs` over all its requests, armed when its first
 * request is sent (after waiting for one of the bridge's scrape slots, if it had to), however the engine answers (or does not); at the deadline, answers that
 * already arrived but wait behind the bridge's own work are read before it counts as a timeout.
 */
export class TargetScraper {
  private timer: NodeJS.Timeout | undefined;
  /** The next tick of this target's grid (a `now()` time). */
  private nextAt = 0;
  private inflight: AbortController | undefined;
  private cancelTurn: (() => void) | undefined;
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
    const { intervalMs } = this.deps.settings;
    const r = (this.deps.random ?? Math.random)();
    this.nextAt = this.deps.now() + Math.floor(Math.min(Math.max(r, 0), 1) * intervalMs);
    this.arm();
  }

  /** Stops the loop and aborts the scrape in flight; resolves once it has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.cancelTurn?.();
    this.inflight?.abort(new ScrapeFailure('error', 'bridge stopping'));
    await this.running;
  }

  private arm(): void {
    this.timer = setTimeout(
      () => {
        this.running = this.tick();
      },
      Math.max(0, this.nextAt - this.deps.now()),
    );
  }

  private async tick(): Promise<void> {
    const slots = this.deps.slots;
    let outcome: ScrapeOutcome;
    if (slots) {
      const turn = slots.take();
      this.cancelTurn = turn.cancel;
      const granted = await turn.granted;
      this.cancelTurn = undefined;
      if (!granted) return;
      try {
        if (this.stopped) return;
        outcome = await this.scrapeOnce();
      } finally {
        slots.release();
      }
    } else {
      outcome = await this.scrapeOnce();
    }
    if (this.stopped) return;
    if (!outcome.ok) this.cache.clear();
    this.deps.onOutcome(this.target, outcome);
    this.nextAt = nextTick(this.nextAt, this.deps.settings.intervalMs, this.deps.now());
    this.arm();
  }

  private async scrapeOnce(): Promise<ScrapeOutcome> {
    const { settings, now } = this.deps;
    const controller = new AbortController();
    this.inflight = controller;
    let settled = false;
    let grace: NodeJS.Immediate | undefined;
    // The timer fires in the timers phase, before this turn's I/O is read: one more turn lets
    // an answer that already arrived (but waited behind other scrapes) complete the scrape.
    const deadline = setTimeout(() => {
      grace = setImmediate(() => {
        if (settled) return;
        controller.abort(
          new ScrapeFailure('timeout', `no complete answer within ${settings.timeoutMs} ms`),
        );
      });
    }, settings.timeoutMs);
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
      settled = true;
      clearTimeout(deadline);
      if (grace) clearImmediate(grace);
      this.inflight = undefined;
    }
  }
}

/** The first tick of the grid (`tick` + k × `intervalMs`) after the one just run, later than `now`. */
export function nextTick(tick: number, intervalMs: number, now: number): number {
  const next = tick + intervalMs;
  if (next > now) return next;
  return next + (Math.floor((now - next) / intervalMs) + 1) * intervalMs;
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
