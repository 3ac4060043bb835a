import { LoadgenUsageError, parseLoadgenArgs } from './loadgen.options';
import { runLoadgenCli } from './loadgen.cli';

function options(argv: string[]) {
  const sut = parseLoadgenArgs(argv);
  if (sut.kind !== 'run') throw new Error('expected a run');
  return sut.options;
}

function usageError(argv: string[]): LoadgenUsageError {
  try {
    parseLoadgenArgs(argv);
  } catch (err) {
    if (err instanceof LoadgenUsageError) return err;
    throw err;
  }
  throw new Error(`no usage error for ${argv.join(' ')}`);
}

describe('loadgen flags', () => {
  it('has loopback, bounded defaults', () => {
    const sut = options([]);
    expect(sut.url.href).toBe('http://127.0.0.1:8000/');
    expect(sut).toMatchObject({
      model: 'Qwen/Qwen3-0.6B',
      rate: 20,
      durationS: 30,
      promptTokens: 1000,
      maxTokens: 300,
      endpoint: 'chat',
      stream: true,
      maxInflight: 4096,
      drainTimeoutS: 120,
      json: false,
      quiet: false,
    });
  });

  it('reads every flag', () => {
    const sut = options(
      ['--url', 'http://127.0.0.1:9000', '--model', 'm', '--rate', '2.5', '--duration=5'].concat(
        ['--prompt-tokens', '10', '--max-tokens', '7', '--endpoint', 'completions', '--no-stream'],
        ['--max-inflight', '8', '--drain-timeout', '0', '--json', '--quiet'],
      ),
    );
    expect(sut).toMatchObject({ model: 'm', rate: 2.5, durationS: 5, promptTokens: 10 });
    expect(sut).toMatchObject({ maxTokens: 7, endpoint: 'completions', stream: false });
    expect(sut).toMatchObject({ maxInflight: 8, drainTimeoutS: 0, json: true, quiet: true });
    expect(options(['--no-stream', '--stream']).stream).toBe(true);
  });

  it.each([
    [['--rate', '0'], '--rate', '0'],
    [['--rate', 'fast'], '--rate', 'fast'],
    [['--duration', 'Infinity'], '--duration', 'Infinity'],
    [['--prompt-tokens', '1.5'], '--prompt-tokens', '1.5'],
    [['--max-tokens', '0'], '--max-tokens', '0'],
    [['--max-inflight', '100000'], '--max-inflight', '100000'],
    [['--drain-timeout', ''], '--drain-timeout', ''],
    [['--endpoint', 'embeddings'], '--endpoint', 'embeddings'],
    [['--url', 'ftp://127.0.0.1'], '--url', 'ftp://127.0.0.1'],
    [['--url', 'localhost:8000'], '--url', 'localhost:8000'],
    [['--model', ' '], '--model', ' '],
    [['--rate', '1000', '--duration', '1001'], '--duration', '1001'],
  ])('rejects %j naming the flag and the value', (argv, flag, value) => {
    const sut = usageError(argv);
    expect(sut.flag).toBe(flag);
    expect(sut.message).toContain(flag);
    expect(sut.message).toContain(`'${value}'`);
  });

  it('names unknown flags, missing values and positionals', () => {
    expect(usageError(['--ratee', '5']).message).toMatch(/--ratee/);
    expect(usageError(['--rate']).message).toMatch(/^--rate needs a value/);
    expect(usageError(['--rate', '-5']).message).toContain("'--rate -5'");
    expect(usageError(['--json=yes']).message).toContain("'--json=yes'");
    expect(usageError(['extra']).message).toMatch(/extra/);
  });

  it('exits 2 with the message and usage on a bad flag, before sending anything', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runLoadgenCli(['--rate', 'lots'], {
      stdout: { write: (t: string) => out.push(t) },
      stderr: { write: (t: string) => err.push(t) },
      onInterrupt: () => undefined,
    });
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err.join('')).toContain("invalid value 'lots' for --rate");
    expect(err.join('')).toContain('usage:');
  });
});
