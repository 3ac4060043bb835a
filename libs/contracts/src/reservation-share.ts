import { isHeaderValue, ParseResult, REPORT_LIMITS } from './kv-metrics.report';

/**
 * One rank's reservations as a frontend replica counts them: what it sent the worker that the
 * rank's newest report does not cover yet (docs/api.md#nats-subjects, `reservations`). Totals of
 * the worker, not split over its ranks, as the replica's own bookkeeping keeps them.
 */
export interface SharedRankReservations {
  readonly dpRank: number;
  readonly decodeBlocks: number;
  readonly prefillTokens: number;
  readonly waiting: number;
}

/** One worker in a replica's message; no ranks: nothing of that replica counts for it any more. */
export interface SharedWorkerReservations {
  readonly workerId: string;
  readonly ranks: readonly SharedRankReservations[];
}

/**
 * A replica's reservations message, after validation: the workers whose totals changed, or (every
 * quarter of the share TTL) every worker it holds reservations on, so that receivers keep them.
 */
export interface ReservationShare {
  /** The publishing replica (a random id per process run). */
  readonly origin: string;
  readonly workers: readonly SharedWorkerReservations[];
}

/** The wire form (snake_case, like the load reports). */
export interface ReservationShareWire {
  origin: string;
  workers: Array<{
    worker_id: string;
    ranks: Array<{
      dp_rank: number;
      decode_blocks: number;
      prefill_tokens: number;
      waiting: number;
    }>;
  }>;
}

/** Bounds that keep one hostile message from costing unbounded memory or time. */
export const SHARE_LIMITS = {
  maxOriginLength: 64,
  /** Workers in one message; a sender splits more over several (about 100 bytes each). */
  maxWorkers: 5000,
} as const;

const isCount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function bad(field: string): { ok: false; reason: string } {
  return { ok: false, reason: `missing or invalid field '${field}'` };
}

function parseRanks(raw: unknown): SharedRankReservations[] | undefined {
  if (!Array.isArray(raw) || raw.length > REPORT_LIMITS.maxDpSize) return undefined;
  const ranks: SharedRankReservations[] = [];
  for (const r of raw) {
    if (!isObject(r)) return undefined;
    const { dp_rank, decode_blocks, prefill_tokens, waiting } = r;
    if (!isCount(dp_rank) || dp_rank >= REPORT_LIMITS.maxDpSize) return undefined;
    if (!isCount(decode_blocks) || !isCount(prefill_tokens) || !isCount(waiting)) return undefined;
    ranks.push({
      dpRank: dp_rank,
      decodeBlocks: decode_blocks,
      prefillTokens: prefill_tokens,
      waiting,
    });
  }
  return ranks;
}

/** Validates a decoded `reservations` payload; a bad one is dropped whole (nothing applied). */
export function parseReservationShare(raw: unknown): ParseResult<ReservationShare> {
  if (!isObject(raw)) return { ok: false, reason: 'payload is not a JSON object' };
  const origin = raw.origin;
  if (typeof origin !== 'string' || origin.length === 0) return bad('origin');
  if (origin.length > SHARE_LIMITS.maxOriginLength) return bad('origin');
  if (!Array.isArray(raw.workers) || raw.workers.length > SHARE_LIMITS.maxWorkers) {
    return bad('workers');
  }
  const workers: SharedWorkerReservations[] = [];
  for (const w of raw.workers as unknown[]) {
    if (!isObject(w)) return bad('workers');
    const id = w.worker_id;
    if (typeof id !== 'string' || id.length === 0 || id.length > REPORT_LIMITS.maxIdLength) {
      return bad('worker_id');
    }
    if (!isHeaderValue(id)) return bad('worker_id');
    const ranks = parseRanks(w.ranks);
    if (!ranks) return bad('ranks');
    workers.push({ workerId: id, ranks });
  }
  return { ok: true, value: { origin, workers } };
}

/** The wire form of a message. */
export function reservationShareWire(share: ReservationShare): ReservationShareWire {
  return {
    origin: share.origin,
    workers: share.workers.map((w) => ({
      worker_id: w.workerId,
      ranks: w.ranks.map((r) => ({
        dp_rank: r.dpRank,
        decode_blocks: r.decodeBlocks,
        prefill_tokens: r.prefillTokens,
        waiting: r.waiting,
      })),
    })),
  };
}
