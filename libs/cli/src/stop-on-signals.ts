/** What `stopOnSignals` needs of the process; `process` itself, or a stand-in in a test. */
export interface SignalledProcess {
  on(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
  exit(code: number): void;
  readonly stderr: { write(text: string): unknown };
}

/**
 * The shutdown every long-running app but the frontend (which drains through Nest) shares: on
 * SIGINT or SIGTERM, `stop` runs once (a second signal while it runs is ignored), then the
 * process exits 0; a `stop` that fails is reported on stderr and the process exits 1.
 */
export function stopOnSignals(stop: () => Promise<void>, proc: SignalledProcess = process): void {
  let stopping = false;
  const onSignal = (): void => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => proc.exit(0),
      (err: unknown) => {
        proc.stderr.write(`shutdown failed: ${String(err)}\n`);
        proc.exit(1);
      },
    );
  };
  proc.on('SIGINT', onSignal);
  proc.on('SIGTERM', onSignal);
}
