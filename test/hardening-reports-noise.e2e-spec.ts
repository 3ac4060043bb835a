import { useSystem } from './support/fixtures';
import { waitFor } from './support/processes';

const FLIPS = 200;
const BUSY = 95;
const FREE = 10;

const transitionLines = (output: string, workerId: string): string[] =>
  output
    .split('\n')
    .filter((l) => l.includes(`worker ${workerId} of model`) && /is now (BUSY|free)/.test(l));

/**
 * Issue 11 item 9(b): a worker hovering at a threshold used to write one busy/free line per
 * report. Lines about one worker are rate-limited and the next line says how many were left out.
 */
describe('busy/free log lines of a hovering worker', () => {
  const sys = useSystem({ bus: true, frontend: ['--active-decode-blocks-threshold', '0.9'] });

  it(`writes a bounded number of lines for ${FLIPS} busy/free flips and reports the rest`, async () => {
    const id = 'hover-1';
    for (let i = 0; i < FLIPS; i++) {
      sys.bus.report(sys.fe.namespace, {
        worker_id: id,
        endpoint: 'http://127.0.0.1:9',
        active_decode_blocks: i % 2 === 0 ? BUSY : FREE,
      });
      await sys.bus.flush();
    }
    // The last report left the worker free; its state is what /metrics shows.
    await waitFor(async () => {
      const text = await (await fetch(`${sys.fe.url}/metrics`)).text();
      return text.includes(`worker_id="${id}"} 0`);
    }, 'last report applied');
    // The suppressed transitions are summed up in a line once the window has passed.
    const summary = await waitFor(
      () => /\((\d+) more transitions? suppressed\)/.exec(sys.fe.proc.output) ?? undefined,
      'a line with the suppressed count',
      20_000,
    );
    const lines = transitionLines(sys.fe.proc.output, id);
    process.stdout.write(`${lines.length} lines for ${FLIPS} transitions\n`);
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(Number(summary[1])).toBeGreaterThanOrEqual(FLIPS - 5);
    // The newest line tells the state the worker ended in.
    expect(lines[lines.length - 1]).toMatch(/is now free/);
  }, 60_000);
});
