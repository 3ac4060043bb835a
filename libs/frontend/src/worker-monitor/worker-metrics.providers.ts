import { Provider } from '@nestjs/common';
import { makeCounterProvider } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { METRIC } from '../metrics/metric-names';
import { MonitorService } from './monitor.service';
import { WorkerRegistry } from './worker-registry.service';

/**
 * Registered by the monitor module, which owns what these metrics are read from. The
 * per-worker gauges are written by `WorkerGaugesRenderer`, outside prom-client.
 */
export const workerMetricProviders: Provider[] = [
  // docs/operations.md#hysteresis-and-dwell (hysteresis): how often workers flip, written by BusyTransitionsCounter.
  makeCounterProvider({
    name: METRIC.busyTransitions,
    help: 'Times a worker of the model turned busy or free (every rank busy, or not any more)',
    labelNames: ['model'],
  }),
  // Outlier ejection, written by OutlierEjection.
  makeCounterProvider({
    name: METRIC.workerEjections,
    help: 'Times a worker of the model was taken out of routing after --eject-after requests failed in a row, or its probe failed',
    labelNames: ['model'],
  }),
  // Two publishers for one worker (report-publishers.ts), counted by the registry.
  makeCounterProvider({
    name: METRIC.reportConflicts,
    help: 'Load reports that arrived while another publisher (another source) reported the same worker and rank within the worker TTL; the rank is judged by the higher load',
    inject: [WorkerRegistry],
    collect(this: Counter, registry: WorkerRegistry): void {
      this.reset();
      this.inc(registry.conflicts);
    },
  }),
  // Beyond docs/metrics.md: with the invalid counter, shows whether every report sent arrived.
  makeCounterProvider({
    name: METRIC.reportsReceived,
    help: 'Load reports received on the kv_metrics subject, valid or not',
    inject: [MonitorService],
    collect(this: Counter, monitor: MonitorService): void {
      this.reset();
      this.inc(monitor.reportsReceived);
    },
  }),
];
