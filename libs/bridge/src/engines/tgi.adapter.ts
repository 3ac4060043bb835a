import { readFamilies } from '../prometheus/prometheus-text';
import { EngineAdapter, EngineHttp, EngineSnapshot, SignalGap } from './engine-adapter';
import { count, optionalCount, record, text } from './engine-values';

const CURRENT_MAX_TOKENS = 'tgi_batch_current_max_tokens';
const MAX_TOTAL_TOKENS = 'tgi_batch_max_total_tokens';
const QUEUE = 'tgi_queue_size';
const STATIC_INFO_CACHE_MS = 10_000;

const NO_BUDGET: SignalGap = {
  gap: 'kv_blocks',
  reason:
    `neither ${MAX_TOTAL_TOKENS} nor /info max_batch_total_tokens gives the batch token ` +
    'budget: reported with 0 KV blocks, so the decode-blocks threshold cannot fire; its ' +
    'queued requests still count.',
};

/**
 * Hugging Face TGI. Its router budgets the running batch in tokens: the batch's current token
 * reservation against `max_batch_total_tokens` (what warmup found fits in KV memory). A "block"
 * in the report is then one token; only the ratio matters to the busy rule.
 */
export class TgiAdapter implements EngineAdapter {
  readonly engine = 'tgi' as const;

  async scrape(http: EngineHttp): Promise<EngineSnapshot> {
    const [info, metrics] = await Promise.all([
      http.json('/info', { cacheMs: STATIC_INFO_CACHE_MS }),
      http.text('/metrics'),
    ]);
    return mapTgi(info, metrics ?? '');
  }
}

export function mapTgi(rawInfo: unknown, metrics: string): EngineSnapshot {
  const info = record(rawInfo, '/info');
  const families = readFamilies(metrics, [CURRENT_MAX_TOKENS, MAX_TOTAL_TOKENS, QUEUE]);
  const total =
    families.get(MAX_TOTAL_TOKENS)?.[0]?.value ??
    optionalCount(info.max_batch_total_tokens, 'max_batch_total_tokens');
  const kvTotalBlocks = total === undefined ? 0 : count(total, MAX_TOTAL_TOKENS);
  // The router sets the gauge while a batch runs and back to 0 after: absent, none has run yet.
  const current = count(families.get(CURRENT_MAX_TOKENS)?.[0]?.value ?? 0, CURRENT_MAX_TOKENS);
  const snapshot: EngineSnapshot = {
    model: text(info.model_id),
    ranks: [
      {
        kvTotalBlocks,
        activeDecodeBlocks: Math.min(current, kvTotalBlocks),
        numRequestsWaiting: optionalCount(families.get(QUEUE)?.[0]?.value, QUEUE),
      },
    ],
  };
  return total === undefined ? { ...snapshot, gaps: [NO_BUDGET] } : snapshot;
}
