import { Injectable, Logger } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { parseKvMetricsReport, parseWorkerDown } from '@sluice/contracts';
import { METRIC } from '../metrics/metric-names';
import { WorkerRegistry } from './worker-registry.service';

/** Log at most one line per this many ms about dropped reports: a flood must not flood logs. */
const DROP_LOG_INTERVAL_MS = 10000;

/** Validates incoming reports and applies them; a bad report is counted and changes nothing. */
@Injectable()
export class MonitorService {
  private readonly logger = new Logger('WorkerMonitor');
  private lastDropLogMs = 0;
  private droppedSinceLog = 0;
  private received = 0;

  constructor(
    private readonly registry: WorkerRegistry,
    @InjectMetric(METRIC.invalidReports) private readonly invalid: Counter,
    @InjectMetric(METRIC.staleReports) private readonly stale: Counter,
  ) {}

  /** kv_metrics messages handed to the monitor so far, valid or not. */
  get reportsReceived(): number {
    return this.received;
  }

  onKvMetrics(payload: unknown): void {
    this.received++;
    const parsed = parseKvMetricsReport(payload);
    if (!parsed.ok) return this.drop(parsed.reason);
    const outcome = this.registry.applyReport(parsed.value, Date.now());
    if (outcome === 'refused') {
      this.drop(`tracked-worker cap reached, worker ${parsed.value.workerId} refused`);
    } else if (outcome === 'stale') {
      this.stale.inc();
    }
  }

  onWorkerDown(payload: unknown): void {
    const parsed = parseWorkerDown(payload);
    if (!parsed.ok) return this.drop(`worker_down: ${parsed.reason}`);
    this.registry.removeWorker(parsed.value.workerId, 'worker_down');
  }

  private drop(reason: string): void {
    this.invalid.inc();
    this.droppedSinceLog++;
    const now = Date.now();
    if (now - this.lastDropLogMs < DROP_LOG_INTERVAL_MS) return;
    this.logger.warn(`dropped ${this.droppedSinceLog} load report(s); latest: ${reason}`);
    this.lastDropLogMs = now;
    this.droppedSinceLog = 0;
  }
}
