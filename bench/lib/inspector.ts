/** Node's flag for an inspector on this loopback port. */
export const inspectFlag = (port: number): string => `--inspect=127.0.0.1:${port}`;

/** What V8 holds after a full collection, from the process's own inspector (bytes). */
export interface HeapAfterGc {
  /** JavaScript objects still reachable. */
  usedBytes: number;
  /** ArrayBuffer and Buffer backing stores (0 on runtimes that do not report them). */
  backingBytes: number;
}

/**
 * Forces a full garbage collection in a process started with `inspectFlag(port)` and reads its
 * heap: what is left is what the process keeps, not the garbage a sawtooth happens to carry.
 */
export async function heapAfterGc(port: number, timeoutMs = 30000): Promise<HeapAfterGc> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl?: string;
  }>;
  const address = targets[0]?.webSocketDebuggerUrl;
  if (!address) throw new Error(`no inspector target on port ${port}`);
  const ws = new WebSocket(address);
  type Settle = { resolve: (r: Record<string, number>) => void; reject: (e: Error) => void };
  const pending = new Map<number, Settle>();
  let next = 0;
  const call = (method: string): Promise<Record<string, number>> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method }));
    });
  ws.addEventListener('message', (event) => {
    const msg = JSON.parse(String(event.data)) as { id?: number; result?: Record<string, number> };
    if (msg.id !== undefined) pending.get(msg.id)?.resolve(msg.result ?? {});
  });
  // Closed (or timed out) with calls unanswered: they fail rather than hang the bench.
  ws.addEventListener('close', () => {
    for (const p of pending.values()) p.reject(new Error(`inspector ${address} closed`));
  });
  const timer = setTimeout(() => ws.close(), timeoutMs);
  try {
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => reject(new Error(`inspector ${address}`)));
    });
    await call('HeapProfiler.collectGarbage');
    const usage = await call('Runtime.getHeapUsage');
    return { usedBytes: usage.usedSize ?? NaN, backingBytes: usage.backingStorageSize ?? 0 };
  } finally {
    clearTimeout(timer);
    ws.close();
  }
}
