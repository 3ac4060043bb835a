import { PromSample, readFamilies } from '../prometheus/prometheus-text';
import {
  EngineAdapter,
  EngineHttp,
  EngineSnapshot,
  MAX_RANKS,
  EngineRankLoad,
  SignalGap,
} from './engine-adapter';
import { byLabel, count, optionalCount, record, text } from './engine-values';
import { UnparsableError } from '../unparsable.error';

const USED = 'sglang:num_used_tokens';
const MAX_TOTAL = 'sglang:max_total_num_tokens';
const QUEUE = 'sglang:num_queue_reqs';
const STATIC_INFO_CACHE_MS = 10_000;

const STALE_GAUGES: SignalGap = {
  gap: 'freshness',
  reason:
    "SGLang's /metrics gauges are written at each prefill batch and every " +
    '--decode-log-interval (40) decode batches, and while idle at most every 30 s, with no ' +
    'time: after a burst they may show the last busy state for up to 30 s. Servers with ' +
    '/v1/loads (read instead when present) do not have this.',
};

/** What `/server_info` tells once: the page size (tokens per KV block) and the served name. */
export interface SglangInfo {
  readonly pageSize: number;
  readonly model: string | undefined;
  readonly maxTotalNumTokens: number | undefined;
}

/**
 * SGLang: `GET /v1/loads` (one entry per data-parallel rank, computed when asked) when the
 * server has it, else the scheduler gauges of `/metrics` (`--enable-metrics`). SGLang counts
 * tokens; a block is a page of `page_size` tokens from `/server_info` (`/get_server_info`
 * before SGLang renamed it; 1 unless `--page-size` is set).
 */
export class SglangAdapter implements EngineAdapter {
  readonly engine = 'sglang' as const;

  async scrape(http: EngineHttp): Promise<EngineSnapshot> {
    const [rawInfo, loads] = await Promise.all([
      serverInfo(http),
      http.json('/v1/loads', { optional: true }),
    ]);
    const info = sglangInfo(rawInfo);
    if (loads !== undefined) return mapSglangLoads(loads, info);
    return mapSglangMetrics((await http.text('/metrics')) ?? '', info);
  }
}

async function serverInfo(http: EngineHttp): Promise<unknown> {
  const options = { optional: true, cacheMs: STATIC_INFO_CACHE_MS };
  return (
    (await http.json('/server_info', options)) ?? (await http.json('/get_server_info', options))
  );
}

export function sglangInfo(raw: unknown): SglangInfo {
  if (raw === undefined) return { pageSize: 1, model: undefined, maxTotalNumTokens: undefined };
  const info = record(raw, '/server_info');
  const pageSize = optionalCount(info.page_size, 'page_size') ?? 1;
  if (pageSize < 1) throw new UnparsableError('page_size is 0');
  return {
    pageSize,
    model: text(info.served_model_name) ?? text(info.model_path),
    maxTotalNumTokens: optionalCount(info.max_total_num_tokens, 'max_total_num_tokens'),
  };
}

export function mapSglangLoads(raw: unknown, info: SglangInfo): EngineSnapshot {
  const loads = record(raw, '/v1/loads').loads;
  if (!Array.isArray(loads) || loads.length === 0 || loads.length > MAX_RANKS) {
    throw new UnparsableError('/v1/loads has no list of loads');
  }
  const entries = loads.map((l: unknown, i) => {
    const entry = record(l, `/v1/loads entry ${i}`);
    return { rank: optionalCount(entry.dp_rank, 'dp_rank') ?? i, entry };
  });
  entries.sort((a, b) => a.rank - b.rank);
  const ranks = entries.map(({ entry }) =>
    blocks(info.pageSize, count(entry.num_used_tokens, 'num_used_tokens'), {
      maxTokens: count(entry.max_total_num_tokens, 'max_total_num_tokens'),
      waiting: optionalCount(entry.num_waiting_reqs, 'num_waiting_reqs'),
      // Newer servers only; `num_total_tokens` is not used: its meaning changed between versions.
      prefill: optionalCount(entry.num_waiting_uncached_tokens, 'num_waiting_uncached_tokens'),
    }),
  );
  return { model: info.model, ranks };
}

export function mapSglangMetrics(body: string, info: SglangInfo): EngineSnapshot {
  const families = readFamilies(body, [USED, MAX_TOTAL, QUEUE]);
  const used = byLabel(firstShard(families.get(USED) ?? []), 'dp_rank');
  if (used.size === 0) throw new UnparsableError(`metric ${USED} is missing`);
  if (used.size > MAX_RANKS) throw new UnparsableError(`${used.size} ranks`);
  const maxTotal = byLabel(firstShard(families.get(MAX_TOTAL) ?? []), 'dp_rank');
  const queue = byLabel(firstShard(families.get(QUEUE) ?? []), 'dp_rank');
  const keys = [...used.keys()].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  const ranks = keys.map((key) => {
    const maxTokens = maxTotal.get(key)?.value ?? info.maxTotalNumTokens;
    if (maxTokens === undefined) throw new UnparsableError(`${MAX_TOTAL} is missing`);
    return blocks(info.pageSize, count(used.get(key)?.value, USED), {
      maxTokens: count(maxTokens, MAX_TOTAL),
      waiting: optionalCount(queue.get(key)?.value, QUEUE),
      prefill: undefined,
    });
  });
  const model = text(used.values().next().value?.labels.model_name) ?? info.model;
  return { model, ranks, gaps: [STALE_GAUGES] };
}

/** Scheduler gauges come from every tensor/pipeline shard in some versions; shard 0 speaks. */
function firstShard(samples: readonly PromSample[]): PromSample[] {
  return samples.filter(
    (s) => (s.labels.tp_rank ?? '0') === '0' && (s.labels.pp_rank ?? '0') === '0',
  );
}

function blocks(
  pageSize: number,
  usedTokens: number,
  r: { maxTokens: number; waiting: number | undefined; prefill: number | undefined },
): EngineRankLoad {
  const kvTotalBlocks = Math.floor(r.maxTokens / pageSize);
  return {
    kvTotalBlocks,
    // A partly filled page is a used page.
    activeDecodeBlocks: Math.min(kvTotalBlocks, Math.ceil(usedTokens / pageSize)),
    numRequestsWaiting: r.waiting,
    activePrefillTokens: r.prefill,
  };
}
