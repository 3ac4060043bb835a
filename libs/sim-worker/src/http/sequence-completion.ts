import type { ServerResponse } from 'node:http';
import { SimEngine } from '../engine/sim-engine';
import { SequenceRequest } from '../engine/sequence';

/**
 * Runs a sequence for a unary response. Resolves true when it finishes, false when the client
 * disconnected first (the sequence is then cancelled, freeing its blocks); rejects when the
 * engine shuts down.
 */
export function completeSequence(
  engine: SimEngine,
  request: SequenceRequest,
  response: ServerResponse,
  onToken: (index: number) => void = () => undefined,
): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const sequence = engine.submit(request, {
      onToken,
      onFinish: () => resolve(true),
      onAbort: reject,
    });
    // 'close' also fires after a normal response; cancelling a finished sequence is a no-op.
    response.once('close', () => {
      sequence.cancel();
      resolve(false);
    });
  });
}
