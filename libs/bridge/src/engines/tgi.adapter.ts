import { readFamilies } from '../prometheus/prometheus-text';
import { EngineAdapter, EngineHttp, EngineSnapshot } from './engine-adapter';
import { count, optionalCount, record, text } from './engine-values';
import { UnparsableError } from '../unparsable.error';

const CURRENT_MAX_TOKENS = 'tgi_batch_current_max_tokens';
const MAX_TOTAL_TOKENS = 'tgi_batch_max_total_tokens';
const QUEUE = 'tgi_queue_size';
const STATIC_INFO_CACHE_MS = 10_000;

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
  if (total === undefined) {
    throw new UnparsableError(`neither ${MAX_TOTAL_TOKENS} nor /info max_batch_total_tokens`);
  }
  const kvTotalBlocks = count(total, MAX_TOTAL_TOKENS);
  // The router sets the gauge when it first forms a batch: absent means nothing has run yet.
  const current = count(families.get(CURRENT_MAX_TOKENS)?.[0]?.value ?? 0, CURRENT_MAX_TOKENS);
  return {
    model: text(info.model_id),
    ranks: [
      {
        kvTotalBlocks,
        activeDecodeBlocks: Math.min(current, kvTotalBlocks),
        numRequestsWaiting: optionalCount(families.get(QUEUE)?.[0]?.value, QUEUE),
      },
    ],
  };
}
