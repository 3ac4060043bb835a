import {
  makeCounterProvider,
  makeGaugeProvider,
  makeHistogramProvider,
} from '@willsoto/nestjs-prometheus';
import { COUNTER_LABELS, METRIC } from './metric-names';
import { flushPendingCounts } from './pending-counts';

/** Latency buckets from 5 ms to 10 min: TTFT under overload can reach minutes without shedding. */
const latencyBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];

/**
 * |predicted − actual| time to first token: fine below a second, so that the median and the 90th
 * percentile can be interpolated.
 */
const predictionErrorBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 2, 5,
];

/** The per-worker gauges are in `monitor/worker-metrics.providers.ts`: they read the registry. */
export const metricProviders = [
  makeCounterProvider({
    name: METRIC.rejections,
    help: 'Requests rejected because every worker of the model was busy (or the router queue was full)',
    labelNames: COUNTER_LABELS.rejections,
    collect: flushPendingCounts,
  }),
  makeCounterProvider({
    name: METRIC.classRejections,
    help: 'Requests rejected as overloaded, by the priority class they were judged as (critical, standard, sheddable)',
    labelNames: COUNTER_LABELS.byClass,
    collect: flushPendingCounts,
  }),
  makeCounterProvider({
    name: METRIC.wouldRejections,
    help: 'Requests admitted in shadow mode that token-capacity would have rejected (every worker of the model busy)',
    labelNames: COUNTER_LABELS.byClass,
    collect: flushPendingCounts,
  }),
  makeCounterProvider({
    name: METRIC.refusals,
    help: 'Requests refused, by reason (the x-sluice-reject-reason header): all_workers_busy, objective, queue_timeout, priority, no_workers',
    labelNames: COUNTER_LABELS.refusals,
    collect: flushPendingCounts,
  }),
  makeCounterProvider({
    name: METRIC.sloRejections,
    help: 'Requests rejected because no free worker was predicted to meet the TTFT objective (also in the rejection counters)',
    labelNames: COUNTER_LABELS.byClass,
    collect: flushPendingCounts,
  }),
  makeHistogramProvider({
    name: METRIC.predictionError,
    help: '|predicted - actual| time to first token of admitted streaming requests, for models with a TTFT objective',
    labelNames: ['model'],
    buckets: predictionErrorBuckets,
  }),
  makeCounterProvider({
    name: METRIC.sloSamples,
    help: 'Would-be TTFT-objective refusals admitted as a sample (--ttft-slo-sample), by outcome: met, missed, failed',
    labelNames: COUNTER_LABELS.sloSamples,
    collect: flushPendingCounts,
  }),
  makeCounterProvider({
    name: METRIC.explored,
    help: 'Would-be TTFT-objective refusals sent to a worker anyway to check its prediction (at most one per worker per --explore-interval-ms)',
    labelNames: ['model'],
  }),
  makeCounterProvider({
    name: METRIC.upstreamRetries,
    help: 'Requests sent again, before any byte reached the client, after their worker refused the connection (connect), cut it (reset) or answered 5xx (status_5xx)',
    labelNames: ['model', 'reason'],
  }),
  makeCounterProvider({
    name: METRIC.tenantRequests,
    help: 'Requests by tenant (a configured tenant id, else other) and outcome: admitted (sent to a worker), rate_limited (429), overloaded (every overload 503, the router queue included)',
    labelNames: ['tenant', 'outcome'],
  }),
  makeCounterProvider({
    name: METRIC.tenantTokens,
    help: 'Tokens of admitted requests by tenant (a configured tenant id, else other) and kind: prompt, completion (the usage the worker reported, else the estimate)',
    labelNames: ['tenant', 'kind'],
  }),
  makeCounterProvider({
    name: METRIC.connectionsRefused,
    help: 'Connections closed as soon as accepted because --max-connections were open',
  }),
  makeCounterProvider({
    name: METRIC.reservationShares,
    help: 'Reservation messages between frontend replicas, by outcome: sent, received (applied), invalid (dropped)',
    labelNames: ['outcome'],
  }),
  makeGaugeProvider({
    name: METRIC.reservationSharePeers,
    help: 'Other frontend replicas whose shared reservations count here now',
  }),
  makeCounterProvider({
    name: METRIC.requests,
    help: 'Requests answered by the frontend',
    labelNames: COUNTER_LABELS.requests,
    collect: flushPendingCounts,
  }),
  makeGaugeProvider({
    name: METRIC.inflight,
    help: 'Requests being served by a worker',
    labelNames: ['model'],
  }),
  makeGaugeProvider({
    name: METRIC.queued,
    help: 'Requests waiting in the router queue',
    labelNames: ['model'],
  }),
  makeHistogramProvider({
    name: METRIC.ttft,
    help: 'Time from request arrival to the first byte of the answer',
    labelNames: ['model'],
    buckets: latencyBuckets,
  }),
  makeHistogramProvider({
    name: METRIC.duration,
    help: 'Time from request arrival to the end of the answer',
    labelNames: ['model'],
    buckets: latencyBuckets,
  }),
  makeGaugeProvider({
    name: METRIC.busConnected,
    help: '1 while the worker-monitor bus (NATS, or the embedded bus) is connected',
  }),
  makeGaugeProvider({
    name: METRIC.thresholdStoreUp,
    help: '1 when the last access to the threshold database succeeded',
  }),
  makeCounterProvider({
    name: METRIC.invalidReports,
    help: 'Load reports dropped as malformed (or refused at the tracked-worker cap)',
  }),
  makeCounterProvider({
    name: METRIC.refusedReports,
    help: 'Valid load reports refused at a tracking cap (reason: worker_cap, rank_cap); also counted as invalid',
    labelNames: ['reason'],
  }),
  makeCounterProvider({
    name: METRIC.staleReports,
    help: 'Load reports ignored because their seq was older than the last seen for the rank',
  }),
];
