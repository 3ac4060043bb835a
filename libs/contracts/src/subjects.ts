/**
 * NATS subjects of docs/api.md#nats-subjects. Handlers register the bare event name (`kv_metrics`,
 * `worker_down`); the transports prefix it with the namespace, which is only known at start.
 */
export const KV_METRICS_EVENT = 'kv_metrics';
export const WORKER_DOWN_EVENT = 'worker_down';
/**
 * Frontend-to-frontend: a replica stored a threshold change; the others reload that model from
 * the database. Payload `{"model": string, "origin": string}`.
 */
export const BUSY_THRESHOLD_CHANGED_EVENT = 'busy_threshold_changed';

/**
 * Frontend-to-frontend: a replica stored a change of a tenant or its keys; the others reload
 * that tenant from the database. Payload `{"tenant": string, "origin": string}`.
 */
export const TENANT_CHANGED_EVENT = 'tenant_changed';
/**
 * Frontend-to-frontend: a replica's tenant consumption since its last message (docs/api.md#tenants),
 * coalesced. Payload `{"origin": string, "usage": {tenant: [requests, tokens]}}`.
 */
export const TENANT_USAGE_EVENT = 'tenant_usage';
/**
 * Frontend-to-frontend: a replica's reservations between reports, coalesced, so that every
 * replica judges a worker on what all of them sent it since its report (reservation-share.ts).
 */
export const RESERVATIONS_EVENT = 'reservations';

export type MonitorEvent =
  | typeof KV_METRICS_EVENT
  | typeof WORKER_DOWN_EVENT
  | typeof BUSY_THRESHOLD_CHANGED_EVENT
  | typeof RESERVATIONS_EVENT;

export const DEFAULT_NAMESPACE = 'dynamo';

export function subjectFor(namespace: string, event: string): string {
  return `namespace.${namespace}.${event}`;
}
