import { Injectable, Logger, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { parseKvMetricsReport, parseWorkerDown } from '@sluice/contracts';
import { FrontendConfig } from '../config/frontend-config';
import { METRIC } from '../metrics/metric-names';
import { OwnAddress } from './own-address';
import { WorkerRegistry } from './worker-registry.service';

/** Log at most one line per this many ms about dropped reports: a flood must not flood logs. */
const DROP_LOG_INTERVAL_MS = 10000;

/** The `reason` label of the refused-reports counter, per registry outcome. */
const REFUSED = { refused: 'worker_cap', refused_ranks: 'rank_cap' } as const;

/** Validates incoming reports and applies them; a bad report is counted and changes nothing. */
@Injectable()
export class MonitorService {
  private readonly logger = new Logger('WorkerMonitor');
  private lastDropLogMs = 0;
  private droppedSinceLog = 0;
  private received = 0;
  private readonly own: OwnAddress;

  constructor(
    private readonly registry: WorkerRegistry,
    @InjectMetric(METRIC.invalidReports) private readonly invalid: Counter,
    @InjectMetric(METRIC.staleReports) private readonly stale: Counter,
    @InjectMetric(METRIC.refusedReports) private readonly refused: Counter,
    config: FrontendConfig,
    @Optional() adapterHost?: HttpAdapterHost,
  ) {
    // The listening port, once there is one, never changes: read the server's address only
    // until it answers, not on every report.
    let bound: number | undefined;
    this.own = new OwnAddress(
      config.httpHost,
      () => (bound ??= boundPort(adapterHost)) ?? config.httpPort,
    );
    // Both series from the start, so that an alert on their rate has something to read.
    for (const reason of Object.values(REFUSED)) refused.inc({ reason }, 0);
  }

  /** kv_metrics messages handed to the monitor so far, valid or not. */
  get reportsReceived(): number {
    return this.received;
  }

  onKvMetrics(payload: unknown): void {
    this.received++;
    const parsed = parseKvMetricsReport(payload);
    if (!parsed.ok) return this.drop(parsed.reason);
    if (this.own.is(parsed.value.endpoint)) {
      return this.drop(`endpoint ${parsed.value.endpoint} is this frontend's own listen address`);
    }
    const outcome = this.registry.applyReport(parsed.value, Date.now());
    if (outcome === 'refused' || outcome === 'refused_ranks') {
      this.refused.inc({ reason: REFUSED[outcome] });
      const cap = outcome === 'refused' ? 'tracked-worker' : 'tracked-rank';
      this.drop(`${cap} cap reached, report of worker ${parsed.value.workerId} refused`);
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

/** The port the HTTP server listens on; undefined until it listens. */
function boundPort(adapterHost: HttpAdapterHost | undefined): number | undefined {
  const server: unknown = adapterHost?.httpAdapter?.getHttpServer();
  const address: unknown =
    server && typeof (server as { address?: unknown }).address === 'function'
      ? (server as { address(): unknown }).address()
      : null;
  return typeof address === 'object' && address !== null && 'port' in address
    ? Number(address.port)
    : undefined;
}
