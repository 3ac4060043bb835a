/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * What an aborted call rejects with: the signal's reason as given (as `fetch` does), which is a
 * `DOMException` named `AbortError` unless the caller passed another to `abort()`.
 */
export function abortReason(signal: AbortSignal | undefined): Error {
  return (
    (signal?.reason as Error | undefined) ??
    new DOMException('This operation was aborted', 'AbortError')
  );
}
