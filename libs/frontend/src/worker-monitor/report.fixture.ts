import { WorkerRegistry } from './worker-registry.service';

/**
 * For unit specs: a report of one rank of worker `id` (model `model`, endpoint `http://<id>`)
 * with `used` of its 100 KV blocks in use and a prefill budget of 100 tokens, received now.
 */
export function reportFor(registry: WorkerRegistry, model: string, id: string, used = 0): void {
  registry.applyReport(
    {
      workerId: id,
      model,
      endpoint: `http://${id}`,
      dpRank: 0,
      dpSize: 1,
      activeDecodeBlocks: used,
      kvTotalBlocks: 100,
      activePrefillTokens: 0,
      maxNumBatchedTokens: 100,
      timestampMs: undefined,
      numRequestsWaiting: undefined,
      seq: undefined,
    },
    Date.now(),
  );
}
