/**
 * The metric families docs/metrics.md names, written out from the contract (not read from the
 * implementation), for the specs that check /metrics and the dashboard against it.
 */
export const CONTRACT_METRICS: readonly string[] = [
  'dynamo_frontend_model_rejection_total',
  'dynamo_frontend_requests_total',
  'dynamo_frontend_inflight_requests',
  'dynamo_frontend_queued_requests',
  'dynamo_frontend_time_to_first_token_seconds',
  'dynamo_frontend_request_duration_seconds',
  'dynamo_frontend_worker_active_decode_blocks',
  'dynamo_frontend_worker_kv_total_blocks',
  'dynamo_frontend_worker_active_prefill_tokens',
  'dynamo_frontend_worker_busy',
  'dynamo_frontend_kv_metrics_invalid_total',
];
