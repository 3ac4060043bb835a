import { PromFamilies, readFamilies } from '../prometheus/prometheus-text';
import { EngineAdapter, EngineHttp, EngineSnapshot, EngineRankLoad } from './engine-adapter';
import { count, optionalCount, record, required, text } from './engine-values';
import { LlamacppSlot, positive, readLlamacppSlots } from './llamacpp-slots';
import { UnparsableError } from '../unparsable.error';

const PROCESSING = 'llamacpp:requests_processing';
const DEFERRED = 'llamacpp:requests_deferred';
const STATIC_INFO_CACHE_MS = 10_000;

/**
 * How a llama-server's slots hold the KV cache, which the server does not say (docs/engines.md,
 * "llama.cpp server"): `per-slot`, each of its `--parallel` slots owns a window of the context
 * (`-np N` given); `unified`, the slots share the whole context (`--kv-unified`, and the default
 * of builds since late 2025 when `-np` is not given).
 */
export const LLAMACPP_KV_CACHES = ['per-slot', 'unified'] as const;
export type LlamacppKvCache = (typeof LLAMACPP_KV_CACHES)[number];

/**
 * llama.cpp's `llama-server`. Its unit of capacity is the slot (`--parallel`): a request waits
 * (`llamacpp:requests_deferred`) until one is free. `/slots` says which slots are processing and,
 * on recent servers, how many tokens each holds; without it (`--no-slots`, and the default from
 * October 2024 to August 2025) `/props`' total_slots and `/metrics`' requests_processing (which
 * need `--metrics`) tell the slots in use.
 */
export class LlamacppAdapter implements EngineAdapter {
  readonly engine = 'llamacpp' as const;

  constructor(private readonly kvCache: LlamacppKvCache = 'per-slot') {}

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
    return mapLlamacpp({ props: p, slots, metrics, models }, this.kvCache);
  }
}

export interface LlamacppAnswers {
  readonly props: unknown;
  readonly slots: unknown;
  readonly metrics: string | undefined;
  readonly models?: unknown;
}

export function mapLlamacpp(
  a: LlamacppAnswers,
  kvCache: LlamacppKvCache = 'per-slot',
): EngineSnapshot {
  const props = record(a.props, '/props');
  const families = readFamilies(a.metrics ?? '', [PROCESSING, DEFERRED]);
  const deferred = families.get(DEFERRED)?.[0]?.value;
  const load =
    a.slots !== undefined
      ? fromSlots(readLlamacppSlots(a.slots), kvCache)
      : fromCounts(props, families, a.metrics !== undefined);
  const model = text(props.model_alias) ?? firstModelId(a.models) ?? text(props.model_path);
  return { model, ranks: [{ ...load, numRequestsWaiting: optionalCount(deferred, DEFERRED) }] };
}

/**
 * Per-slot windows: a slot is one block of its window, so the frontend reserves one slot for a
 * request. A unified cache: tokens, the cache's own size in total, in use the tokens the
 * processing slots hold or their share of the slots, whichever is more (a full set of slots makes
 * new requests wait however empty the cache is). Idle slots' cached prompts do not count: the
 * server drops them when it needs the room.
 */
function fromSlots(slots: LlamacppSlot[], kvCache: LlamacppKvCache): EngineRankLoad {
  const busy = slots.filter((s) => s.processing);
  const window = slots[0]?.nCtx;
  const held = busy.every((s) => s.tokens !== undefined)
    ? busy.reduce((sum, s) => sum + (s.tokens ?? 0), 0)
    : undefined;
  if (kvCache === 'unified' && window !== undefined && held !== undefined) {
    const slotShare = Math.ceil((busy.length * window) / slots.length);
    return {
      kvTotalBlocks: window,
      activeDecodeBlocks: Math.min(window, Math.max(held, slotShare)),
      kvBlockSize: 1,
    };
  }
  return { kvTotalBlocks: slots.length, activeDecodeBlocks: busy.length, kvBlockSize: window };
}

/** Without `/slots`: the slots in use from `/metrics`, their number and window from `/props`. */
function fromCounts(
  props: Record<string, unknown>,
  families: PromFamilies,
  haveMetrics: boolean,
): EngineRankLoad {
  if (!haveMetrics) {
    throw new UnparsableError('neither /slots nor /metrics answers (start llama-server --metrics)');
  }
  const total = count(props.total_slots, 'total_slots');
  const busy = count(required(families, PROCESSING)[0].value, PROCESSING);
  const settings = props.default_generation_settings;
  const window =
    typeof settings === 'object' && settings !== null
      ? positive((settings as { n_ctx?: unknown }).n_ctx, 'default_generation_settings.n_ctx')
      : undefined;
  return { kvTotalBlocks: total, activeDecodeBlocks: Math.min(busy, total), kvBlockSize: window };
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
