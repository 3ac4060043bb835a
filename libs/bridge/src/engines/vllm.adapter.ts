import { PromFamilies, PromSample, readFamilies } from '../prometheus/prometheus-text';
import {
  EngineAdapter,
  EngineHttp,
  EngineSnapshot,
  MAX_RANKS,
  EngineRankLoad,
  SignalGap,
} from './engine-adapter';
import { byLabel, count, fraction, optionalCount, text } from './engine-values';
import { UnparsableError } from '../unparsable.error';

const KV_USAGE = 'vllm:kv_cache_usage_perc';
/** The name before vLLM 0.9.2 (V0 engine and early V1); hidden from 0.11 on. */
const KV_USAGE_OLD = 'vllm:gpu_cache_usage_perc';
const CACHE_CONFIG = 'vllm:cache_config_info';
const WAITING = 'vllm:num_requests_waiting';
const FAMILIES = [KV_USAGE, KV_USAGE_OLD, CACHE_CONFIG, WAITING];
/**
 * The four families the bridge reads. vLLM's API server answers this query with its whole
 * exposition (~45 KB) since it serves `/metrics` through prometheus-fastapi-instrumentator;
 * only older releases, on prometheus_client's own exporter, answer it with just these samples.
 * The adapter reads either from the one answer: it picks the wanted lines out before parsing.
 */
export const VLLM_FILTERED_PATH = `/metrics?${FAMILIES.map(
  (n) => `${encodeURIComponent('name[]')}=${encodeURIComponent(n)}`,
).join('&')}`;
/** Note kept for a target whose filtered answer lacks the usage gauge (see `scrape`). */
const FILTER_UNUSABLE = 'vllm:name-filter-unusable';

const NO_BLOCK_COUNT: SignalGap = {
  gap: 'kv_blocks',
  reason:
    `${CACHE_CONFIG} gives no num_gpu_blocks (vLLM's V1 engine before 0.8.5 never passes it ` +
    'to its API server): reported with 0 KV blocks, so the decode-blocks threshold cannot ' +
    'fire; its waiting requests still count. Starting vLLM with --num-gpu-blocks-override ' +
    'set to the block count it logs makes the count known.',
};
const USAGE_PER_PROCESS: SignalGap = {
  gap: 'freshness',
  reason:
    `${KV_USAGE} comes once per API server process (label pid, prometheus_client ` +
    'multiprocess mode), each the value that process last received, with no time: the ' +
    'bridge takes the highest, which may be older than the report says.',
};

/**
 * vLLM's `/metrics`. With data parallelism one API server serves several engine cores, each
 * sample labelled `engine="<index>"`: one rank per distinct value, numbered densely in engine
 * order (a node serving engines 2 and 3 of a larger deployment reports ranks 0 and 1 of 2).
 */
export class VllmAdapter implements EngineAdapter {
  readonly engine = 'vllm' as const;

  /**
   * The filtered `/metrics` first. In prometheus_client's multiprocess mode behind its own
   * exporter (vLLM's V0 API server with frontend multiprocessing) the filter matches nothing
   * and the answer is empty: the target is then read unfiltered until a scrape fails.
   */
  async scrape(http: EngineHttp): Promise<EngineSnapshot> {
    if (!http.notes.has(FILTER_UNUSABLE)) {
      const families = readFamilies((await http.text(VLLM_FILTERED_PATH)) ?? '', FAMILIES);
      if (usageOf(families).length > 0) return mapVllmFamilies(families);
      http.notes.add(FILTER_UNUSABLE);
    }
    return mapVllmMetrics((await http.text('/metrics')) ?? '');
  }
}

export function mapVllmMetrics(body: string): EngineSnapshot {
  return mapVllmFamilies(readFamilies(body, FAMILIES));
}

function usageOf(families: PromFamilies): readonly PromSample[] {
  const current = families.get(KV_USAGE) ?? [];
  return current.length > 0 ? current : (families.get(KV_USAGE_OLD) ?? []);
}

function mapVllmFamilies(families: PromFamilies): EngineSnapshot {
  const usage = usageOf(families);
  if (usage.length === 0) throw new UnparsableError(`metric ${KV_USAGE} is missing`);
  const usageByEngine = highestByEngine(usage);
  const engines = sortedEngines([...usageByEngine.keys()]);
  if (engines.length > MAX_RANKS) throw new UnparsableError(`${engines.length} engines`);
  const configs = byLabel(families.get(CACHE_CONFIG) ?? [], 'engine');
  const waiting = byLabel(families.get(WAITING) ?? [], 'engine');
  const gaps = new Set<SignalGap>();
  if (usageByEngine.size < usage.length) gaps.add(USAGE_PER_PROCESS);
  const ranks = engines.map((engine): EngineRankLoad => {
    const kvTotalBlocks = gpuBlocks(pick(configs, engine));
    if (kvTotalBlocks === undefined) gaps.add(NO_BLOCK_COUNT);
    const perc = fraction(usageByEngine.get(engine), `${KV_USAGE}{engine="${engine}"}`);
    return {
      kvTotalBlocks: kvTotalBlocks ?? 0,
      activeDecodeBlocks: Math.round(perc * (kvTotalBlocks ?? 0)),
      numRequestsWaiting: optionalCount(pick(waiting, engine)?.value, WAITING),
    };
  });
  const model =
    text(usage[0].labels.model_name) ?? text(families.get(WAITING)?.[0]?.labels.model_name);
  return gaps.size > 0 ? { model, ranks, gaps: [...gaps] } : { model, ranks };
}

/**
 * Usage per `engine` label value. Several samples of one engine are the API server processes'
 * own copies (label `pid`): the highest is kept, and NaN in any of them fails the scrape.
 */
function highestByEngine(samples: readonly PromSample[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    const key = s.labels.engine ?? '';
    const seen = out.get(key);
    out.set(key, seen === undefined || Number.isNaN(s.value) ? s.value : Math.max(seen, s.value));
  }
  return out;
}

/** A per-engine sample, or the engine-less one (older vLLM labels cache_config_info without it). */
function pick(samples: Map<string, PromSample>, engine: string): PromSample | undefined {
  return (
    samples.get(engine) ??
    samples.get('') ??
    (samples.size === 1 ? [...samples.values()][0] : undefined)
  );
}

/**
 * The engine's KV blocks: `num_gpu_blocks`, else `num_gpu_blocks_override` (what the engine
 * then allocates); undefined when the exposition tells neither (the label reads "None").
 */
function gpuBlocks(config: PromSample | undefined): number | undefined {
  for (const label of ['num_gpu_blocks', 'num_gpu_blocks_override']) {
    const raw = config?.labels[label]?.trim();
    if (raw === undefined || raw === 'None') continue;
    return count(raw === '' ? NaN : Number(raw), `${CACHE_CONFIG}{${label}}`);
  }
  return undefined;
}

function sortedEngines(keys: string[]): string[] {
  const numeric = (k: string): number => (/^\d+$/.test(k) ? Number(k) : Number.POSITIVE_INFINITY);
  return keys.sort((a, b) => numeric(a) - numeric(b) || a.localeCompare(b));
}
