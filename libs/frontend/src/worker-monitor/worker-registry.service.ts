import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { KvMetricsReport } from '@sluice/contracts';
import { FrontendConfig } from '../config/frontend-config';
import { perClass, PerClass, PRIORITY_CLASSES, PriorityClass } from '../config/priority';
import { BusyThresholds } from '../thresholds/busy-thresholds';
import { ClassThresholds } from '../thresholds/class-thresholds';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { isRankBusy, RankLoad } from './busy-rule';
import { DwellQueue } from './dwell-queue';
import { isStale, judgeRank, publisherOf } from './report-publishers';
import {
  judgedLoad,
  measuredAtMs,
  noPeerReservations,
  PeerReservations,
  reservedBlocks,
} from './reservations';
import { WorkerEventLog } from './worker-event-log';
import { ModelEntry, RankState, WorkerEntry } from './worker-entry';

/**
 * Models whose workers have all gone are remembered (so they answer 503, not 404) up to this
 * many; beyond it the oldest are forgotten, so invented model names cannot grow memory forever.
 */
export const MAX_EMPTY_MODELS = 1000;

export type RemovalReason = 'worker_down' | 'expired' | 'replaced';

/**
 * What became of a report: applied, refused at the tracked-worker cap (`refused`) or at the
 * tracked-rank cap (`refused_ranks`), or older than the last seen.
 */
export type ReportOutcome = 'applied' | 'refused' | 'refused_ranks' | 'stale';

/** A request sent to a worker, counted against its ranks until a report covers it. */
export interface ReservationHandle {
  /**
   * The worker took the request (answered its status line): reports measured from now on hold
   * it. Only for a reservation made with `awaitAcceptance`; the first token implies it.
   */
  accepted(): void;
  /** The first token came: the prompt is no longer prefill load. */
  firstToken(): void;
  /** The request ended (idempotent): its KV blocks are no longer held. */
  release(): void;
}

/** Told of every change the registry makes, e.g. to keep Prometheus series in step. */
export interface RegistryObserver {
  rankUpdated?(worker: WorkerEntry, rank: number, state: RankState): void;
  /** The worker turned busy or free for requests of class `c` (`worker.busyFor(c)`). */
  busyChanged?(worker: WorkerEntry, c: PriorityClass): void;
  workerRemoved?(worker: WorkerEntry, reason: RemovalReason): void;
  /** This frontend's own reservations on the worker may have changed (sent, answered, covered). */
  reservationsChanged?(worker: WorkerEntry): void;
  /** The model is no longer known (no worker, and beyond the empty models remembered). */
  modelForgotten?(name: string): void;
  /** The worker left routing or came back (`worker.inRouting`; outlier ejection). */
  routingChanged?(worker: WorkerEntry): void;
}

/**
 * Live workers per model and their busy state for each priority class, kept current as reports
 * arrive so that the admission decision is a constant-time lookup (`ModelEntry.allBusyFor`).
 *
 * Hysteresis and dwell (docs/operations.md#hysteresis-and-dwell) act on a rank's state here, where it is cached, for each
 * class on its own: a rank busy for a class is judged with every limit of that class ×
 * `--busy-release-factor`, and a rank whose state for a class changed less than
 * `--busy-min-dwell-ms` ago keeps it (that class's dwell queue judges it again when the dwell
 * ends, with or without a new report). A change of thresholds is judged at once, dwell or not: the operator
 * who changes a threshold expects it to apply to the next request (docs/architecture.md#busy-rule); a state it changes starts
 * a new dwell.
 */
@Injectable()
export class WorkerRegistry implements OnModuleInit, OnModuleDestroy {
  private readonly log = new WorkerEventLog();
  private readonly workers = new Map<string, WorkerEntry>();
  private readonly models = new Map<string, ModelEntry>();
  private servedVersion = 0;
  private readonly observers: RegistryObserver[] = [];
  /** Names of models with no live worker, oldest first. */
  private readonly emptyModels = new Set<string>();
  /** Reports judged between two or more publishers of their rank (report-publishers.ts). */
  conflicts = 0;
  /** Ranks stored over all workers, capped by `--max-tracked-ranks` (memory, issue 11). */
  private rankTotal = 0;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** While the bus is down silence is not death: expiry waits until it is back. */
  private expiryPaused = false;
  /** `--busy-release-factor`: a busy rank is judged with every limit times this. */
  private readonly releaseFactor: number;
  /** Per class, ranks within `--busy-min-dwell-ms` of their last change; null without a dwell. */
  private readonly dwell: PerClass<DwellQueue> | null;

  constructor(
    private readonly config: FrontendConfig,
    private readonly thresholds: ThresholdsService,
  ) {
    this.releaseFactor = config.busyReleaseFactor;
    this.dwell =
      config.busyMinDwellMs > 0
        ? perClass(
            (c) =>
              new DwellQueue(config.busyMinDwellMs, c, (worker, state, now) => {
                // A worker removed meanwhile (or replaced under its id) is no longer judged.
                if (this.workers.get(worker.id) === worker) {
                  const load = judgedLoad(state, worker.dpSize);
                  const t = this.thresholds.byClass(worker.model)[c];
                  this.judgeClass(worker, state, load, c, t, now);
                }
              }),
          )
        : null;
    thresholds.onChange((model) => this.reevaluate(model));
  }

  onModuleInit(): void {
    const every = Math.max(50, Math.min(1000, Math.floor(this.config.workerTtlMs / 4)));
    this.sweepTimer = setInterval(() => {
      const now = Date.now();
      this.expire(now);
      this.log.flush(now);
    }, every);
    this.sweepTimer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweepTimer);
    for (const c of PRIORITY_CLASSES) this.dwell?.[c].stop();
  }

  observe(observer: RegistryObserver): void {
    this.observers.push(observer);
  }

  model(name: string): ModelEntry | undefined {
    return this.models.get(name);
  }

  /** A live worker by id. */
  worker(id: string): WorkerEntry | undefined {
    return this.workers.get(id);
  }

  /** Changes whenever a model gains its first live worker or loses its last one. */
  servedModelsVersion(): number {
    return this.servedVersion;
  }

  /** Models that have (or had) workers; a model stays known after its workers expire. */
  modelNames(): string[] {
    return [...this.models.keys()];
  }

  workerCount(): number {
    return this.workers.size;
  }

  /** Ranks stored over all live workers (those that reported, not their dp_size). */
  trackedRanks(): number {
    return this.rankTotal;
  }

  /** Every live worker, e.g. for metrics computed at scrape time; do not mutate while iterating. */
  liveWorkers(): IterableIterator<WorkerEntry> {
    return this.workers.values();
  }

  applyReport(report: KvMetricsReport, nowMs: number): ReportOutcome {
    let worker = this.workers.get(report.workerId);
    if (worker && !this.sameIdentity(worker, report)) {
      this.remove(worker, 'replaced');
      worker = undefined;
    }
    const newRank = !worker?.ranks.has(report.dpRank);
    if (newRank && this.rankTotal >= this.config.maxTrackedRanks) return 'refused_ranks';
    if (!worker) {
      if (this.workers.size >= this.config.maxWorkers) return 'refused';
      worker = this.add(report, nowMs);
    }
    const held = worker.ranks.get(report.dpRank);
    if (held && isStale(held, report)) return 'stale';
    const ttl = this.config.workerTtlMs;
    const judged = judgeRank(worker, report.dpRank, held, report, nowMs, ttl);
    if (judged.conflict) {
      this.conflicts++;
      this.log.publishersConflict(worker, report.dpRank, held?.rivals?.keys() ?? []);
    }
    const { report: r, receivedMs } = judged;
    worker.lastSeenMs = nowMs;
    worker.lastReportMs = r.timestampMs ?? receivedMs;
    worker.source = r.source;
    const measured = measuredAtMs(r.timestampMs, receivedMs, ttl);
    const state = this.updateRank(worker, r, nowMs, measured);
    state.publisher = publisherOf(r);
    state.receivedMs = receivedMs;
    for (const o of this.observers) o.rankUpdated?.(worker, report.dpRank, state);
    return 'applied';
  }

  /**
   * The router sent (`tokens` > 0) or saw the first token of (`tokens` < 0) a request on the
   * worker. Ranks that report no prefill load are judged on this count, split evenly (docs/api.md#nats-subjects).
   */
  addPendingPrefill(worker: WorkerEntry, tokens: number): void {
    worker.pendingPrefillTokens += tokens;
    // A worker that expired while the request ran is no longer ours to re-judge.
    if (this.workers.get(worker.id) !== worker) return;
    let t: ClassThresholds | undefined;
    let now = 0;
    for (const state of worker.ranks.values()) {
      if (state.prefillReported) continue;
      state.activePrefillTokens = worker.pendingPrefillTokens / worker.dpSize;
      t ??= this.thresholds.byClass(worker.model);
      now ||= Date.now();
      this.judge(worker, state, t, now);
    }
  }

  /**
   * The router sent a request to the worker at `nowMs`. Until a report measured after that
   * covers it (with `awaitAcceptance`, measured after the handle's `accepted()`), each rank is
   * judged with its share of the request's prompt tokens (until its first token), its KV blocks
   * (until it ends) and, when the worker had no room for it, one waiting request (until its first
   * token; reservations.ts).
   */
  reserve(
    worker: WorkerEntry,
    promptTokens: number,
    maxTokens: number,
    nowMs: number,
    awaitAcceptance = false,
  ): ReservationHandle {
    const ledger = worker.reservations;
    ledger.expire(nowMs - this.config.workerTtlMs, worker.ranks);
    const blocks = reservedBlocks(
      promptTokens,
      maxTokens,
      worker.kvBlockSize,
      worker.totalKvBlocks(),
    );
    const r = ledger.add(
      worker.ranks,
      nowMs,
      promptTokens,
      blocks,
      awaitAcceptance,
      worker.hasNoRoomFor(blocks),
    );
    this.rejudge(worker);
    this.reservationsChanged(worker);
    return {
      accepted: () => ledger.accept(r, Date.now()),
      firstToken: () => {
        if (!r.prefilling) return;
        ledger.accept(r, Date.now());
        ledger.firstToken(r, worker.ranks, Date.now());
        this.rejudge(worker);
        this.reservationsChanged(worker);
      },
      release: () => {
        if (!r.live) return;
        ledger.release(r, worker.ranks, Date.now());
        this.rejudge(worker);
        this.reservationsChanged(worker);
      },
    };
  }

  /**
   * Another replica's reservations on the worker (`origin`'s newest message; none: it holds none
   * any more). Ranks the worker does not have count for nothing. False for a worker not known here.
   */
  sharePeerReservations(
    workerId: string,
    origin: string,
    ranks: ReadonlyMap<number, PeerReservations> | undefined,
  ): boolean {
    const worker = this.workers.get(workerId);
    if (!worker) return false;
    if (ranks && ranks.size > 0) worker.peerShares.set(origin, ranks);
    else if (!worker.peerShares.delete(origin)) return true;
    for (const [dpRank, state] of worker.ranks) sumPeerShares(worker, dpRank, state.peers);
    this.rejudge(worker);
    return true;
  }

  removeWorker(workerId: string, reason: RemovalReason): void {
    const worker = this.workers.get(workerId);
    if (worker) this.remove(worker, reason);
  }

  /**
   * Takes a live worker out of routing (outlier ejection) or puts it back: out, it is in no free
   * list and its load does not count for the model's busy state; back, it is free for each
   * class it is not busy for.
   */
  setInRouting(worker: WorkerEntry, inRouting: boolean): void {
    if (this.workers.get(worker.id) !== worker || worker.inRouting === inRouting) return;
    const model = this.models.get(worker.model);
    worker.inRouting = inRouting;
    if (model) {
      model.routable += inRouting ? 1 : -1;
      for (const c of PRIORITY_CLASSES) {
        if (!inRouting) model.markBusy(worker, c);
        else if (!worker.classes[c].busy) model.markFree(worker, c);
      }
    }
    for (const o of this.observers) o.routingChanged?.(worker);
  }

  setExpiryPaused(paused: boolean, nowMs: number): void {
    if (this.expiryPaused && !paused) {
      // Reports could not arrive during the outage: give every worker a fresh TTL.
      for (const worker of this.workers.values()) worker.lastSeenMs = nowMs;
    }
    this.expiryPaused = paused;
  }

  expire(nowMs: number): void {
    if (this.expiryPaused) return;
    const deadline = nowMs - this.config.workerTtlMs;
    for (const worker of this.workers.values()) {
      if (worker.lastSeenMs < deadline) this.remove(worker, 'expired');
    }
  }

  private sameIdentity(worker: WorkerEntry, r: KvMetricsReport): boolean {
    return worker.model === r.model && worker.endpoint === r.endpoint && worker.dpSize === r.dpSize;
  }

  private add(r: KvMetricsReport, nowMs: number): WorkerEntry {
    const worker = new WorkerEntry(r.workerId, r.model, r.endpoint, r.dpSize, nowMs);
    let model = this.models.get(r.model);
    if (!model) {
      model = new ModelEntry(r.model);
      this.models.set(r.model, model);
    }
    this.emptyModels.delete(r.model);
    if (model.workers.size === 0) this.servedVersion++;
    this.workers.set(worker.id, worker);
    model.workers.set(worker.id, worker);
    model.routable++;
    for (const c of PRIORITY_CLASSES) model.markFree(worker, c);
    this.log.joined(worker);
    return worker;
  }

  private remove(worker: WorkerEntry, reason: RemovalReason): void {
    const model = this.models.get(worker.model);
    if (model) {
      for (const c of PRIORITY_CLASSES) model.markBusy(worker, c);
      model.workers.delete(worker.id);
      if (worker.inRouting) model.routable--;
      if (model.workers.size === 0) {
        this.servedVersion++;
        this.rememberEmpty(model.name);
      }
    }
    this.workers.delete(worker.id);
    this.rankTotal -= worker.ranks.size;
    this.log.removed(worker, reason);
    for (const o of this.observers) o.workerRemoved?.(worker, reason);
  }

  private rememberEmpty(name: string): void {
    this.emptyModels.add(name);
    if (this.emptyModels.size <= MAX_EMPTY_MODELS) return;
    const oldest = this.emptyModels.values().next().value as string;
    this.emptyModels.delete(oldest);
    this.models.delete(oldest);
    for (const o of this.observers) o.modelForgotten?.(oldest);
  }

  private updateRank(
    worker: WorkerEntry,
    r: KvMetricsReport,
    nowMs: number,
    measuredMs: number,
  ): RankState {
    let state = worker.ranks.get(r.dpRank);
    const prefill = r.activePrefillTokens ?? worker.pendingPrefillTokens / worker.dpSize;
    if (!state) {
      state = {
        activeDecodeBlocks: r.activeDecodeBlocks,
        kvTotalBlocks: r.kvTotalBlocks,
        activePrefillTokens: prefill,
        prefillReported: r.activePrefillTokens !== undefined,
        maxNumBatchedTokens: r.maxNumBatchedTokens,
        numRequestsWaiting: r.numRequestsWaiting,
        seq: r.seq,
        publisher: publisherOf(r),
        receivedMs: nowMs,
        rivals: undefined,
        busyFor: perClass(() => false),
        heldUntil: perClass(() => 0),
        reserved: worker.reservations.openRank(),
        peers: sumPeerShares(worker, r.dpRank, noPeerReservations()),
      };
      worker.ranks.set(r.dpRank, state);
      this.rankTotal++;
    } else {
      state.activeDecodeBlocks = r.activeDecodeBlocks;
      state.kvTotalBlocks = r.kvTotalBlocks;
      state.activePrefillTokens = prefill;
      state.prefillReported = r.activePrefillTokens !== undefined;
      state.maxNumBatchedTokens = r.maxNumBatchedTokens;
      state.numRequestsWaiting = r.numRequestsWaiting;
      state.seq = r.seq;
    }
    worker.kvBlockSize = r.kvBlockSize;
    const next = state.reserved.next;
    worker.reservations.cover(state.reserved, measuredMs, worker.ranks.size);
    this.judge(worker, state, this.thresholds.byClass(worker.model), nowMs);
    if (state.reserved.next !== next) this.reservationsChanged(worker);
    return state;
  }

  /**
   * Judges a rank for every priority class, each with its own thresholds (docs/security.md#priority-classes-who-may-set-x-sluice-priority), on what
   * the rank reported plus what was sent to it since (reservations.ts).
   */
  private judge(worker: WorkerEntry, state: RankState, t: ClassThresholds, nowMs: number): void {
    const load = judgedLoad(state, worker.dpSize);
    for (const c of PRIORITY_CLASSES) this.judgeClass(worker, state, load, c, t[c], nowMs);
  }

  private reservationsChanged(worker: WorkerEntry): void {
    for (const o of this.observers) o.reservationsChanged?.(worker);
  }

  /** Every rank of a live worker again, after its reservations changed. */
  private rejudge(worker: WorkerEntry): void {
    // A worker that expired while the request ran is no longer ours to re-judge.
    if (this.workers.get(worker.id) !== worker) return;
    const t = this.thresholds.byClass(worker.model);
    const now = Date.now();
    for (const state of worker.ranks.values()) this.judge(worker, state, t, now);
  }

  /**
   * Judges a rank for one class on its current load: busy for the class, it turns free only once
   * no term exceeds the class's limit × the release factor; within its dwell for the class it
   * keeps its state (judged again when the dwell ends).
   */
  private judgeClass(
    worker: WorkerEntry,
    state: RankState,
    load: RankLoad,
    c: PriorityClass,
    t: BusyThresholds,
    nowMs: number,
  ): void {
    const busy = isRankBusy(load, t, state.busyFor[c] ? this.releaseFactor : 1);
    if (busy !== state.busyFor[c] && nowMs >= state.heldUntil[c]) {
      this.setRankBusy(worker, state, c, busy, nowMs);
    }
  }

  private setRankBusy(
    worker: WorkerEntry,
    state: RankState,
    c: PriorityClass,
    busy: boolean,
    nowMs: number,
  ): void {
    if (state.busyFor[c] === busy) return;
    state.busyFor[c] = busy;
    this.dwell?.[c].start(worker, state, nowMs);
    const own = worker.classes[c];
    own.busyRanks += busy ? 1 : -1;
    // docs/architecture.md#busy-rule: busy only when all ranks 0..dp_size-1 are busy; unreported ranks are not.
    const workerBusy = own.busyRanks === worker.dpSize;
    if (workerBusy === own.busy) return;
    own.busy = workerBusy;
    const model = this.models.get(worker.model);
    if (workerBusy) model?.markBusy(worker, c);
    else model?.markFree(worker, c);
    if (c === 'standard') this.log.busyChanged(worker, model);
    for (const o of this.observers) o.busyChanged?.(worker, c);
  }

  /**
   * Thresholds (or the admission mode) changed: recompute every rank of the model (or of all
   * models for `null`).
   */
  private reevaluate(modelName: string | null): void {
    const models = modelName === null ? [...this.models.values()] : [this.models.get(modelName)];
    const now = Date.now();
    for (const model of models) {
      if (!model) continue;
      const t = this.thresholds.byClass(model.name);
      for (const worker of model.workers.values()) {
        for (const state of worker.ranks.values()) {
          const load = judgedLoad(state, worker.dpSize);
          // No dwell here: a change of thresholds applies now (its own change starts a dwell).
          for (const c of PRIORITY_CLASSES) {
            const busy = isRankBusy(load, t[c], state.busyFor[c] ? this.releaseFactor : 1);
            this.setRankBusy(worker, state, c, busy, now);
          }
        }
      }
    }
  }
}

/** Sums the other replicas' reservations on one rank of the worker into `into`. */
function sumPeerShares(
  worker: WorkerEntry,
  dpRank: number,
  into: PeerReservations,
): PeerReservations {
  into.decodeBlocks = 0;
  into.prefillTokens = 0;
  into.waiting = 0;
  for (const ranks of worker.peerShares.values()) {
    const p = ranks.get(dpRank);
    if (!p) continue;
    into.decodeBlocks += p.decodeBlocks;
    into.prefillTokens += p.prefillTokens;
    into.waiting += p.waiting;
  }
  return into;
}
