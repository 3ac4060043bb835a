import { KV_METRICS_EVENT, subjectFor, WORKER_DOWN_EVENT, WorkerDownWire } from '@sluice/contracts';
import { hostname } from 'node:os';
import { Agent, Dispatcher } from 'undici';
import { BridgeLogger, defaultBridgeLogger } from './bridge-logger';
import { BRIDGE_DEFAULTS, EngineBridgeOptions } from './engine-bridge.options';
import { EngineAdapter } from './engines/engine-adapter';
import { createEngineAdapter } from './engines/engine-adapters';
import { DEFAULT_MAX_BODY_BYTES } from './http/engine-http.client';
import { BridgeMetrics } from './metrics/bridge-metrics';
import { ReportBuilder } from './scrape/report-builder';
import { ScrapeFailure } from './http/scrape-failure';
import { ScrapeSlots } from './scrape/scrape-slots';
import { ScrapeOutcome, TargetScraper } from './scrape/target-scraper';
import { updateSignalGaps } from './signal-gaps';
import { Target } from './targets/target';
import { buildTargetSources } from './targets/target-sources';
import { TargetSource } from './targets/target-source';
import { BridgeWorkerStatus, ScrapedWorker } from './scraped-worker';

/**
 * docs/engines.md: scrapes engines and publishes docs/api.md#nats-subjects reports for them, and worker_down when one
 * stops answering or leaves the target set. Independent of any process: the standalone app and
 * the frontend both construct it with their publisher and registry.
 */
export class EngineBridge {
  private readonly workers = new Map<string, ScrapedWorker>();
  private readonly adapter: EngineAdapter;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly logger: BridgeLogger;
  private readonly metrics: BridgeMetrics;
  private readonly reports: ReportBuilder;
  private readonly now: () => number;
  private readonly sources: TargetSource[];
  private readonly slots: ScrapeSlots;
  private readonly gapOut: Parameters<typeof updateSignalGaps>[2];
  private removeAgeSource: (() => void) | undefined;
  private publishFailing = false;
  private running = false;
  private warnedDuplicates = new Set<string>();

  constructor(private readonly options: EngineBridgeOptions) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? defaultBridgeLogger();
    this.adapter =
      options.adapter ??
      createEngineAdapter(options.engine, { llamacppKvCache: options.llamacppKvCache });
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      new Agent({ keepAliveTimeout: 10_000, connect: { timeout: this.timeoutMs } });
    this.metrics = BridgeMetrics.for(options.registry, this.now);
    this.gapOut = { logger: this.logger, metrics: this.metrics };
    this.reports = new ReportBuilder({
      model: options.model,
      maxNumBatchedTokens: options.maxNumBatchedTokens,
      source: options.source ?? `bridge ${options.engine} ${hostname()}:${process.pid}`,
    });
    this.sources = buildTargetSources(options, this.logger);
    this.slots = new ScrapeSlots(
      options.maxConcurrentScrapes ?? BRIDGE_DEFAULTS.maxConcurrentScrapes,
    );
  }

  /** Loads every target source (rejects with TargetSpecError when one is invalid) and scrapes. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.removeAgeSource = this.metrics.addReportTimes(() => this.reportTimes());
    try {
      for (const source of this.sources) await source.start(() => this.reconcile());
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.reconcile();
  }

  /** Stops every timer and scrape; live workers get worker_down. Never rejects. */
  async stop(): Promise<void> {
    this.running = false;
    for (const source of this.sources) source.stop();
    const entries = [...this.workers.values()];
    this.workers.clear();
    await Promise.all(entries.map((e) => e.scraper.stop().catch(() => undefined)));
    for (const e of entries) {
      if (e.state === 'up') this.publishDown(e.target.workerId);
      this.metrics.removeWorker(e.target.workerId);
    }
    this.removeAgeSource?.();
    this.removeAgeSource = undefined;
    if (this.ownsDispatcher) await this.dispatcher.destroy().catch(() => undefined);
  }

  /** Every target, for a status page. */
  status(): BridgeWorkerStatus[] {
    return [...this.workers.values()].map((e) => ({
      workerId: e.target.workerId,
      engine: this.options.engine,
      url: e.target.url,
      model: e.model,
      dpSize: e.dpSize,
      up: e.state === 'up',
      state: e.state,
      lastReportAtMs: e.lastReportAt,
      lastResult: e.lastResult,
      lastError: e.lastError,
      signalGaps: e.signalGaps,
    }));
  }

  private get timeoutMs(): number {
    return this.options.scrapeTimeoutMs ?? BRIDGE_DEFAULTS.scrapeTimeoutMs;
  }

  private reconcile(): void {
    if (!this.running) return;
    const wanted = new Map<string, Target>();
    for (const source of this.sources) {
      for (const t of source.current()) {
        const seen = wanted.get(t.workerId);
        if (!seen) wanted.set(t.workerId, t);
        else if (seen.url !== t.url && !this.warnedDuplicates.has(t.workerId)) {
          this.warnedDuplicates.add(t.workerId);
          this.logger.warn(
            `worker id ${t.workerId} given for ${seen.url} and ${t.url}: scraping ${seen.url}`,
          );
        }
      }
    }
    for (const [id, entry] of this.workers) {
      if (wanted.get(id)?.url !== entry.target.url) this.remove(entry);
    }
    for (const target of wanted.values()) if (!this.workers.has(target.workerId)) this.add(target);
  }

  private add(target: Target): void {
    const scraper = new TargetScraper(target, {
      adapter: this.adapter,
      dispatcher: this.dispatcher,
      now: this.now,
      random: this.options.random,
      slots: this.slots,
      settings: {
        intervalMs: this.options.scrapeIntervalMs ?? BRIDGE_DEFAULTS.scrapeIntervalMs,
        timeoutMs: this.timeoutMs,
        maxBodyBytes: this.options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      },
      onOutcome: (t, outcome) => this.onOutcome(t, outcome),
    });
    this.workers.set(target.workerId, {
      target,
      scraper,
      state: 'unknown',
      lastOkAt: this.now(),
      lastReportAt: null,
      lastResult: null,
      lastError: null,
      model: null,
      dpSize: 0,
      signalGaps: [],
      loggedGaps: new Set(),
    });
    this.metrics.addWorker(target.workerId);
    scraper.start();
  }

  /** A target that left its file or DNS name is gone for good: worker_down, series removed. */
  private remove(entry: ScrapedWorker): void {
    const id = entry.target.workerId;
    this.workers.delete(id);
    entry.scraper.stop().catch(() => undefined);
    this.publishDown(id);
    this.metrics.removeWorker(id);
  }

  private onOutcome(target: Target, outcome: ScrapeOutcome): void {
    const entry = this.workers.get(target.workerId);
    if (!entry || entry.target !== target) return;
    try {
      if (outcome.ok) {
        const reports = this.reports.build(target, outcome.snapshot, outcome.at);
        if (entry.state === 'down') this.logger.log(`worker ${target.workerId} answers again`);
        Object.assign(entry, {
          state: 'up',
          lastOkAt: outcome.at,
          lastReportAt: outcome.at,
          lastResult: 'ok',
          lastError: null,
          model: reports[0].model,
          dpSize: reports.length,
        });
        this.metrics.countScrape(target.workerId, 'ok');
        updateSignalGaps(entry, outcome.snapshot.gaps ?? [], this.gapOut);
        const subject = subjectFor(this.options.namespace, KV_METRICS_EVENT);
        for (const report of reports) this.publish(subject, report);
        return;
      }
      this.onFailure(entry, outcome.failure, outcome.at);
    } catch (err) {
      this.onFailure(entry, err, outcome.at);
    }
  }

  private onFailure(entry: ScrapedWorker, err: unknown, at: number): void {
    const failure = asFailure(err);
    const id = entry.target.workerId;
    if (entry.lastResult === 'ok' || entry.lastResult === null) {
      this.logger.warn(
        `scraping ${id} at ${entry.target.url}: ${failure.result}: ${failure.message}`,
      );
    }
    entry.lastResult = failure.result;
    entry.lastError = failure.message.slice(0, 500);
    this.metrics.countScrape(id, failure.result);
    const downAfter = this.options.downAfterMs ?? BRIDGE_DEFAULTS.downAfterMs;
    if (entry.state !== 'down' && at - entry.lastOkAt >= downAfter) {
      entry.state = 'down';
      this.logger.warn(`worker ${id} down: no good answer for ${at - entry.lastOkAt} ms`);
      this.publishDown(id);
    }
  }

  private publishDown(workerId: string): void {
    const down: WorkerDownWire = { worker_id: workerId };
    this.publish(subjectFor(this.options.namespace, WORKER_DOWN_EVENT), down);
  }

  /** A failing bus is logged once per streak and never stops the scraping. */
  private publish(subject: string, payload: object): void {
    try {
      this.options.publisher.publish(subject, payload);
      this.publishFailing = false;
    } catch (err) {
      if (!this.publishFailing) this.logger.warn(`publishing ${subject} failed: ${String(err)}`);
      this.publishFailing = true;
    }
  }

  private *reportTimes(): Iterable<readonly [string, number]> {
    for (const e of this.workers.values()) {
      if (e.lastReportAt !== null) yield [e.target.workerId, e.lastReportAt];
    }
  }
}

function asFailure(err: unknown): ScrapeFailure {
  if (err instanceof ScrapeFailure) return err;
  return new ScrapeFailure('unparsable', err instanceof Error ? err.message : String(err));
}
