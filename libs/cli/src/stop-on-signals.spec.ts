import { EventEmitter } from 'node:events';
import { SignalledProcess, stopOnSignals } from './stop-on-signals';

class FakeProcess extends EventEmitter implements SignalledProcess {
  readonly exits: number[] = [];
  readonly errors: string[] = [];
  readonly stderr = { write: (text: string) => this.errors.push(text) };
  exit(code: number): void {
    this.exits.push(code);
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('stopOnSignals', () => {
  it('stops once on SIGTERM, ignoring a second signal while stopping, then exits 0', async () => {
    const proc = new FakeProcess();
    let release!: () => void;
    const stop = jest.fn(() => new Promise<void>((resolve) => (release = resolve)));
    stopOnSignals(stop, proc);
    proc.emit('SIGTERM');
    proc.emit('SIGINT');
    await settle();
    expect(stop).toHaveBeenCalledTimes(1);
    expect(proc.exits).toEqual([]);
    release();
    await settle();
    expect(proc.exits).toEqual([0]);
  });

  it('stops on SIGINT as well', async () => {
    const proc = new FakeProcess();
    const stop = jest.fn(() => Promise.resolve());
    stopOnSignals(stop, proc);
    proc.emit('SIGINT');
    await settle();
    expect(stop).toHaveBeenCalledTimes(1);
    expect(proc.exits).toEqual([0]);
  });

  it('reports a failed stop on stderr and exits 1', async () => {
    const proc = new FakeProcess();
    stopOnSignals(() => Promise.reject(new Error('drain timed out')), proc);
    proc.emit('SIGTERM');
    await settle();
    expect(proc.errors).toEqual(['shutdown failed: Error: drain timed out\n']);
    expect(proc.exits).toEqual([1]);
  });
});
