/** Metric names of docs/metrics.md; dashboards depend on them. */
export const METRIC = {
  rejections: 'dynamo_frontend_model_rejection_total',
  requests: 'dynamo_frontend_requests_total',
  inflight: 'dynamo_frontend_inflight_requests',
  queued: 'dynamo_frontend_queued_requests',
  ttft: 'dynamo_frontend_time_to_first_token_seconds',
  duration: 'dynamo_frontend_request_duration_seconds',
  workerDecodeBlocks: 'dynamo_frontend_worker_active_decode_blocks',
  workerKvTotalBlocks: 'dynamo_frontend_worker_kv_total_blocks',
  workerPrefillTokens: 'dynamo_frontend_worker_active_prefill_tokens',
  workerBusy: 'dynamo_frontend_worker_busy',
  invalidReports: 'dynamo_frontend_kv_metrics_invalid_total',
  // Beyond docs/metrics.md: what an operator needs to alert on a frontend's own dependencies.
  busConnected: 'sluice_frontend_bus_connected',
  thresholdStoreUp: 'sluice_frontend_threshold_store_up',
  reportsReceived: 'sluice_frontend_kv_metrics_received_total',
  staleReports: 'sluice_frontend_kv_metrics_stale_total',
  refusedReports: 'sluice_frontend_kv_metrics_refused_total',
  // Beyond docs/metrics.md, beside the worker gauges: the input of the waiting-requests threshold.
  workerRequestsWaiting: 'sluice_frontend_worker_requests_waiting',
  // docs/security.md#priority-classes-who-may-set-x-sluice-priority: rejections by the request's priority class.
  classRejections: 'sluice_frontend_rejection_total',
  // docs/operations.md#rolling-out-shedding: what shadow mode would have refused, and how often workers flip busy/free.
  wouldRejections: 'sluice_frontend_would_reject_total',
  busyTransitions: 'sluice_frontend_worker_busy_transitions_total',
  // docs/operations.md#ttft-objective, TTFT objective: refusals, the prediction error of admitted requests, and the
  // outcome of the would-be refusals admitted as a sample (--ttft-slo-sample).
  sloRejections: 'sluice_frontend_slo_rejection_total',
  predictionError: 'sluice_frontend_ttft_prediction_error_seconds',
  sloSamples: 'sluice_frontend_slo_sample_total',
  explored: 'sluice_frontend_explored_total',
  // Issue 41: requests sent again before any byte reached the client, by what failed.
  upstreamRetries: 'sluice_frontend_upstream_retries_total',
  // Every refusal by its reason, the value of its `x-sluice-reject-reason` header.
  refusals: 'sluice_frontend_refusals_total',
  // Issue 41: connections closed at once because --max-connections were open.
  connectionsRefused: 'sluice_frontend_connections_refused_total',
  // Issue 41: outlier ejection (docs/operations.md#outlier-ejection), beside the worker gauges.
  workerEjected: 'sluice_frontend_worker_ejected',
  workerEjections: 'sluice_frontend_worker_ejections_total',
  // Issue 42: reservations shared between replicas (decision 0182).
  reservationShares: 'sluice_frontend_reservation_shares_total',
  reservationSharePeers: 'sluice_frontend_reservation_share_peers',
  // Issue 41: reports judged between two publishers of the same worker and rank.
  reportConflicts: 'sluice_frontend_report_conflicts_total',
  // docs/api.md#tenants: each tenant's requests by outcome and tokens by kind.
  tenantRequests: 'sluice_frontend_tenant_requests_total',
  tenantTokens: 'sluice_frontend_tenant_tokens_total',
} as const;

/** Why a request was sent again: refused connection, connection cut, or a worker's 5xx. */
export type RetryReason = 'connect' | 'reset' | 'status_5xx';

/** How a would-be objective refusal admitted as a sample turned out. */
/** Label names of the request counters, in the order their values are given (`PendingCounts`). */
export const COUNTER_LABELS = {
  rejections: ['model', 'endpoint'],
  byClass: ['model', 'endpoint', 'priority'],
  requests: ['model', 'endpoint', 'request_type', 'status', 'error_type'],
  sloSamples: ['model', 'outcome'],
  refusals: ['model', 'endpoint', 'reason'],
} as const;

/**
 * Why a request was refused: the `x-sluice-reject-reason` header and the `reason` label (docs/api.md,
 * "Refusal reasons"). The tenant reasons are kept for the tenant limits.
 */
export type RefusalReason =
  | 'all_workers_busy'
  | 'objective'
  | 'queue_timeout'
  | 'priority'
  | 'tenant_rate_limit'
  | 'tenant_concurrency'
  | 'no_workers';

/** The refusal header's name. */
export const REJECT_REASON_HEADER = 'x-sluice-reject-reason';

export type SloSampleOutcome = 'met' | 'missed' | 'failed';

export type EndpointLabel = 'chat_completions' | 'completions' | 'embeddings';
export type ErrorType =
  '' | 'overload' | 'validation' | 'not_found' | 'unavailable' | 'upstream' | 'internal';

const ENDPOINTS: Record<string, EndpointLabel> = {
  '/v1/chat/completions': 'chat_completions',
  '/v1/completions': 'completions',
  '/v1/embeddings': 'embeddings',
};

/** Every value of the `endpoint` label. */
export const ENDPOINT_LABELS: readonly EndpointLabel[] = Object.values(ENDPOINTS);

/** The `endpoint` label of an OpenAI route, or undefined for any other URL. */
export function endpointLabelFor(url: string): EndpointLabel | undefined {
  const q = url.indexOf('?');
  return ENDPOINTS[q === -1 ? url : url.slice(0, q)];
}

/** Priority classes of docs/security.md#priority-classes-who-may-set-x-sluice-priority, the `priority` label's values; defined in config/priority.ts. */
export { DEFAULT_PRIORITY, PRIORITY_CLASSES, type PriorityClass } from '../config/priority';
