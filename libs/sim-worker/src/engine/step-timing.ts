/**
 * Step latency model of NVIDIA Dynamo's mocker (fitted on a real vLLM deployment), so that a
 * simulated worker fills and drains its KV cache at a realistic pace.
 */

/** Milliseconds to prefill `tokens` new prompt tokens in one step (0 when there are none). */
export function prefillStepMs(tokens: number): number {
  if (tokens <= 0) return 0;
  return 4.209989e-7 * tokens * tokens + 1.518344e-2 * tokens + 16.50142;
}

/** Milliseconds of one decode step at KV utilisation `u` = active decode blocks / total blocks. */
export function decodeStepMs(utilisation: number): number {
  const u = utilisation;
  return Math.max(1, -25.74 * u * u + 54.01 * u + 5.74);
}

/** Wall-clock duration of a step, divided by `speedup` (0 means no delay at all). */
export function stepDurationMs(
  prefillTokens: number,
  decoding: boolean,
  utilisation: number,
  speedup: number,
): number {
  if (speedup === 0) return 0;
  const decode = decoding ? decodeStepMs(utilisation) : 0;
  return (prefillStepMs(prefillTokens) + decode) / speedup;
}
