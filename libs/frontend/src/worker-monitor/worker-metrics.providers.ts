import { Provider } from '@nestjs/common';
import { makeCounterProvider, makeGaugeProvider } from '@willsoto/nestjs-prometheus';
import { Counter, Gauge } from 'prom-client';
import { MonitorService } from './monitor.service';
import { RankState } from './worker-entry';
import { WorkerRegistry } from './worker-registry.service';
import { METRIC } from '../metrics/metric-names';

type RankField = keyof Pick<
  RankState,
  'activeDecodeBlocks' | 'kvTotalBlocks' | 'activePrefillTokens' | 'numRequestsWaiting'
>;

/**
 * Per-worker gauges of contract §6, computed when `/metrics` is scraped rather than on every
 * load report: the registry is the only copy of the state, a report costs no label hashing, and
 * a forgotten worker's series disappear at the next scrape because every collection starts
 * from an empty gauge. A rank that does not report a field has no series for it.
 */
function rankGauge(name: string, help: string, field: RankField): Provider {
  return makeGaugeProvider({
    name,
    help,
    labelNames: ['model', 'worker_id', 'dp_rank'],
    inject: [WorkerRegistry],
    collect(this: Gauge, registry: WorkerRegistry): void {
      this.reset();
      for (const worker of registry.liveWorkers()) {
        const { model, id } = worker;
        // Only the ranks that reported: never a walk over dp_size slots.
        for (const [rank, state] of worker.ranks) {
          const value = state[field];
          if (value !== undefined) this.set({ model, worker_id: id, dp_rank: String(rank) }, value);
        }
      }
    },
  });
}

/** Registered by the monitor module, which owns what these metrics are read from. */
export const workerMetricProviders: Provider[] = [
  rankGauge(
    METRIC.workerDecodeBlocks,
    'KV-cache blocks in use, as last reported by the worker rank',
    'activeDecodeBlocks',
  ),
  rankGauge(
    METRIC.workerKvTotalBlocks,
    'KV-cache blocks in total, as last reported by the worker rank',
    'kvTotalBlocks',
  ),
  rankGauge(
    METRIC.workerPrefillTokens,
    'Prompt tokens waiting for prefill, as last reported by the worker rank',
    'activePrefillTokens',
  ),
  rankGauge(
    METRIC.workerRequestsWaiting,
    'Requests queued in the engine (num_requests_waiting), as last reported by the worker rank',
    'numRequestsWaiting',
  ),
  makeGaugeProvider({
    name: METRIC.workerBusy,
    help: '1 when every rank of the worker is over a busy threshold',
    labelNames: ['model', 'worker_id'],
    inject: [WorkerRegistry],
    collect(this: Gauge, registry: WorkerRegistry): void {
      this.reset();
      for (const worker of registry.liveWorkers()) {
        this.set({ model: worker.model, worker_id: worker.id }, worker.busy ? 1 : 0);
      }
    },
  }),
  // Beyond contract §6: with the invalid counter, shows whether every report sent arrived.
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
