import { OVERLOAD_MESSAGE } from '@sluice/contracts';
import { PriorityClass } from '../config/priority';
import { encodeErrorBody } from '../errors/error-body';
import {
  EndpointLabel,
  ErrorType,
  REJECT_REASON_HEADER,
  RefusalReason,
} from '../metrics/metric-names';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';

/** A 503 of admission (or of the router queue), with the contract's body encoded once. */
export interface Refusal {
  readonly status: 503;
  /** `{"message","type","code"}`, as a Buffer so Content-Type stays exactly `application/json`. */
  readonly payload: Buffer;
  /** The payload's bytes as a latin1 string (one character per byte), for `RefusalReply.send`. */
  readonly payloadLatin1: string;
  readonly message: string;
  readonly errorType: ErrorType;
  /** The `x-sluice-reject-reason` header; none while draining (a shutdown, not a refusal). */
  readonly reason: RefusalReason | null;
  /**
   * Counted in `dynamo_frontend_model_rejection_total` and `sluice_frontend_rejection_total`,
   * and answered with `Retry-After`.
   */
  readonly rejection: boolean;
  /** Also counted in `sluice_frontend_slo_rejection_total`: the TTFT objective refused it. */
  readonly objective?: boolean;
}

function refusal(
  message: string,
  errorType: ErrorType,
  rejection: boolean,
  reason: RefusalReason | null,
): Refusal {
  const payload = encodeErrorBody(message, 'service_unavailable', 503);
  const payloadLatin1 = payload.toString('latin1');
  return { status: 503, payload, payloadLatin1, message, errorType, reason, rejection };
}

/** An overload rejection with its own message (the router queue's), encoded once at start. */
export function overloadRefusal(message: string, reason: RefusalReason): Refusal {
  return refusal(message, 'overload', true, reason);
}

/** Every live worker of the model is busy (docs/api.md#errors, docs/architecture.md#busy-rule). */
export const OVERLOADED: Refusal = overloadRefusal(OVERLOAD_MESSAGE, 'all_workers_busy');
/**
 * Every live worker is busy for a sheddable request but not at the configured thresholds: the
 * lower class is refused first. The overload answer, byte for byte; only the reason differs.
 */
export const CLASS_REFUSED: Refusal = overloadRefusal(OVERLOAD_MESSAGE, 'priority');
/**
 * No free worker is predicted to give the first token within the TTFT objective (docs/operations.md#ttft-objective),
 * or a queued request can no longer make its deadline: the overload answer, byte for byte.
 */
export const OBJECTIVE_MISSED: Refusal = {
  ...overloadRefusal(OVERLOAD_MESSAGE, 'objective'),
  objective: true,
};
/** A shutdown is draining in-flight requests; new ones go to another replica. */
export const DRAINING: Refusal = refusal(
  'Server is shutting down, please retry on another replica',
  'unavailable',
  false,
  null,
);

/** What the writer needs of a reply: Fastify's reply has it; the filter adapts Nest's adapter. */
export interface RefusalReply {
  code(status: number): unknown;
  header(name: string, value: string): unknown;
  /**
   * Sends the body. `latin1` holds the same bytes as a string, for a reply on Node's own
   * response (`http/raw-reply.ts`): Node writes a string body in one piece with the head, where
   * a Buffer takes a second, gathered write. Fastify's reply ignores it (a string would get a
   * charset appended to its Content-Type).
   */
  send(payload: Buffer, latin1?: string): unknown;
}

/**
 * Writes a refusal: status, `Content-Type: application/json`, `Retry-After` on a rejection
 * (the value `RetryAfter.of` gives for the request's model), and the pre-encoded body. The one
 * writer of the overload 503, for the early hook and the filter alike.
 */
export function writeRefusal(
  reply: RefusalReply,
  refusal: Refusal,
  retryAfter: string | null,
): void {
  reply.code(refusal.status);
  reply.header('content-type', 'application/json');
  if (refusal.reason !== null) reply.header(REJECT_REASON_HEADER, refusal.reason);
  if (refusal.rejection && retryAfter !== null) reply.header('retry-after', retryAfter);
  reply.send(refusal.payload, refusal.payloadLatin1);
}

/** Counts a refusal as docs/metrics.md and docs/operations.md#rolling-out-shedding ask, whichever path answered it. */
export function countRefusal(
  metrics: RequestMetricsService,
  endpoint: EndpointLabel,
  body: { model?: unknown; stream?: unknown } | null | undefined,
  refusal: Refusal,
  priority: PriorityClass,
): void {
  const model = metrics.modelLabel(body?.model);
  if (refusal.rejection) metrics.rejected(model, endpoint, priority);
  if (refusal.objective === true) metrics.sloRejected(model, endpoint, priority);
  if (refusal.reason !== null) metrics.refused(model, endpoint, refusal.reason);
  metrics.answered(model, endpoint, body?.stream === true, refusal.errorType);
}
