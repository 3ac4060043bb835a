import { PassThrough } from 'node:stream';
import { LogOutput, PinoLoggerService } from './logging';

/** A stream collecting what is written to it, looking like a terminal or not. */
function output(isTTY: boolean): { out: LogOutput; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  Object.defineProperty(stream, 'isTTY', { value: isTTY });
  return { out: stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

// eslint-disable-next-line no-control-regex -- the escape character is what colour codes start with
const ANSI_COLOUR = /\x1b\[[0-9;]*m/g;

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('PinoLoggerService', () => {
  it('writes one JSON object per event when the output is not a terminal', async () => {
    const { out, text } = output(false);
    const sut = PinoLoggerService.create('info', out);
    sut.log('frontend listening on http://127.0.0.1:8000', 'Sluice');
    sut.warn({ msg: 'worker forgotten', worker_id: 'w1' }, 'Monitor');
    await tick();
    const lines = text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        context: 'Sluice',
        msg: expect.stringMatching(/^frontend listening/),
      }),
      expect.objectContaining({ level: 40, context: 'Monitor', worker_id: 'w1' }),
    ]);
  });

  it('writes human lines, not JSON, on a terminal', async () => {
    const { out, text } = output(true);
    const sut = PinoLoggerService.create('info', out);
    sut.log('frontend listening on http://127.0.0.1:8000', 'Sluice');
    sut.debug('not at this level', 'Sluice');
    sut.error(new Error('bus gone'), 'Monitor');
    await tick();
    const lines = text().split('\n');
    // Colour codes may be on or off depending on the environment; strip them.
    const plain = lines.map((l) => l.replace(ANSI_COLOUR, ''));
    expect(plain[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[Sluice\] frontend listening on http/,
    );
    expect(plain.some((l) => l.includes('not at this level'))).toBe(false);
    expect(plain.some((l) => /ERROR: \[Monitor\] bus gone/.test(l))).toBe(true);
    expect(lines.every((l) => !l.startsWith('{'))).toBe(true);
  });
});
