import { PromFamilies, PromSample, readFamilies } from '../prometheus/prometheus-text';
import { EngineAdapter, EngineHttp, EngineSnapshot, MAX_RANKS, RankLoad } from './engine-adapter';
import { byLabel, count, fraction, optionalCount, text } from './engine-values';
import { UnparsableError } from '../unparsable.error';

const KV_USAGE = 'vllm:kv_cache_usage_perc';
/** The name before vLLM 0.10 (V0 engine and early V1); still served by older images. */
const KV_USAGE_OLD = 'vllm:gpu_cache_usage_perc';
const CACHE_CONFIG = 'vllm:cache_config_info';
const WAITING = 'vllm:num_requests_waiting';
const FAMILIES = [KV_USAGE, KV_USAGE_OLD, CACHE_CONFIG, WAITING];
/**
 * prometheus_client (vLLM's exporter) answers `?name[]=…` with only those samples: about 1 KB
 * instead of ~45 KB, most of a scrape's cost at hundreds of targets. Servers that ignore the
 * query send everything, which reads the same.
 */
export const VLLM_FILTERED_PATH = `/metrics?${FAMILIES.map(
  (n) => `${encodeURIComponent('name[]')}=${encodeURIComponent(n)}`,
).join('&')}`;
/** Note kept for a target whose filtered answer lacks the usage gauge (see `scrape`). */
const FILTER_UNUSABLE = 'vllm:name-filter-unusable';

/**
 * vLLM's `/metrics`. With data parallelism one API server serves several engine cores, each
 * sample labelled `engine="<index>"`: one rank per distinct value, numbered densely in engine
 * order (a node serving engines 2 and 3 of a larger deployment reports ranks 0 and 1 of 2).
 */
export class VllmAdapter implements EngineAdapter {
  readonly engine = 'vllm' as const;

  /**
   * The filtered `/metrics` first. In prometheus_client's multiprocess mode (vLLM with several
   * API server processes) the filter matches nothing and the answer is empty: the target is
   * then read unfiltered until a scrape fails.
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
  const usageByEngine = byLabel(usage, 'engine');
  const engines = sortedEngines([...usageByEngine.keys()]);
  if (engines.length > MAX_RANKS) throw new UnparsableError(`${engines.length} engines`);
  const configs = byLabel(families.get(CACHE_CONFIG) ?? [], 'engine');
  const waiting = byLabel(families.get(WAITING) ?? [], 'engine');
  const ranks = engines.map((engine): RankLoad => {
    const kvTotalBlocks = gpuBlocks(pick(configs, engine), engine);
    const perc = fraction(usageByEngine.get(engine)?.value, `${KV_USAGE}{engine="${engine}"}`);
    return {
      kvTotalBlocks,
      activeDecodeBlocks: Math.round(perc * kvTotalBlocks),
      numRequestsWaiting: optionalCount(pick(waiting, engine)?.value, WAITING),
    };
  });
  const model =
    text(usage[0].labels.model_name) ?? text(families.get(WAITING)?.[0]?.labels.model_name);
  return { model, ranks };
}

/** A per-engine sample, or the engine-less one (older vLLM labels cache_config_info without it). */
function pick(samples: Map<string, PromSample>, engine: string): PromSample | undefined {
  return (
    samples.get(engine) ??
    samples.get('') ??
    (samples.size === 1 ? [...samples.values()][0] : undefined)
  );
}

function gpuBlocks(config: PromSample | undefined, engine: string): number {
  const raw = config?.labels.num_gpu_blocks;
  if (raw === undefined) {
    throw new UnparsableError(`${CACHE_CONFIG}{num_gpu_blocks} missing for engine '${engine}'`);
  }
  // Before the profiling run the label reads "None": no capacity known yet, no report.
  return count(raw.trim() === '' ? NaN : Number(raw), `${CACHE_CONFIG}{num_gpu_blocks}`);
}

function sortedEngines(keys: string[]): string[] {
  const numeric = (k: string): number => (/^\d+$/.test(k) ? Number(k) : Number.POSITIVE_INFINITY);
  return keys.sort((a, b) => numeric(a) - numeric(b) || a.localeCompare(b));
}
