import { readFamilies } from '../prometheus/prometheus-text';
import { EngineAdapter, EngineHttp, EngineSnapshot, MAX_RANKS } from './engine-adapter';
import { count, optionalCount, record, required, text } from './engine-values';
import { UnparsableError } from '../unparsable.error';

const PROCESSING = 'llamacpp:requests_processing';
const DEFERRED = 'llamacpp:requests_deferred';
const STATIC_INFO_CACHE_MS = 10_000;

/**
 * llama.cpp's `llama-server`. It has no paged KV cache to report: each of its `--parallel`
 * slots owns a fixed share of the context, so a slot is the unit of capacity. `/slots` says
 * which are processing (disabled by `--no-slots`: then `/metrics`' requests_processing, which
 * needs `--metrics`); `/metrics`' requests_deferred counts requests waiting for a slot.
 */
export class LlamacppAdapter implements EngineAdapter {
  readonly engine = 'llamacpp' as const;

  async scrape(http: EngineHttp): Promise<EngineSnapshot> {
    const [props, slots, metrics] = await Promise.all([
      http.json('/props', { cacheMs: STATIC_INFO_CACHE_MS }),
      http.json('/slots', { optional: true }),
      http.text('/metrics', { optional: true }),
    ]);
    const p = record(props, '/props');
    const models =
      text(p.model_alias) === undefined
        ? await http.json('/v1/models', { optional: true, cacheMs: STATIC_INFO_CACHE_MS })
        : undefined;
    return mapLlamacpp({ props: p, slots, metrics, models });
  }
}

export interface LlamacppAnswers {
  readonly props: unknown;
  readonly slots: unknown;
  readonly metrics: string | undefined;
  readonly models?: unknown;
}

export function mapLlamacpp(a: LlamacppAnswers): EngineSnapshot {
  const props = record(a.props, '/props');
  const families = readFamilies(a.metrics ?? '', [PROCESSING, DEFERRED]);
  const deferred = families.get(DEFERRED)?.[0]?.value;
  const numRequestsWaiting = optionalCount(deferred, DEFERRED);
  let kvTotalBlocks: number;
  let activeDecodeBlocks: number;
  if (a.slots !== undefined) {
    if (!Array.isArray(a.slots) || a.slots.length > MAX_RANKS * 1024) {
      throw new UnparsableError('/slots is not a list of slots');
    }
    kvTotalBlocks = a.slots.length;
    activeDecodeBlocks = a.slots.filter((s: unknown, i) => processing(s, i)).length;
  } else {
    kvTotalBlocks = count(props.total_slots, 'total_slots');
    const busy = count(required(families, PROCESSING)[0].value, PROCESSING);
    activeDecodeBlocks = Math.min(busy, kvTotalBlocks);
  }
  const model = text(props.model_alias) ?? firstModelId(a.models) ?? text(props.model_path);
  return { model, ranks: [{ kvTotalBlocks, activeDecodeBlocks, numRequestsWaiting }] };
}

function processing(slot: unknown, i: number): boolean {
  const flag = record(slot, `/slots entry ${i}`).is_processing;
  if (typeof flag !== 'boolean')
    throw new UnparsableError(`/slots entry ${i} has no is_processing`);
  return flag;
}

function firstModelId(models: unknown): string | undefined {
  if (typeof models !== 'object' || models === null) return undefined;
  const data = (models as { data?: unknown }).data;
  if (!Array.isArray(data) || data.length === 0) return undefined;
  const first: unknown = data[0];
  return typeof first === 'object' && first !== null
    ? text((first as { id?: unknown }).id)
    : undefined;
}
