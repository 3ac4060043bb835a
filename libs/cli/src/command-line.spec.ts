import { CommandLine, readCommandLine } from './command-line';
import { valueFlag } from './flag-table';
import { integerIn } from './flag-values';
import { parseFlags } from './flags.parser';
import { formatUsage } from './usage.formatter';

const TABLE = {
  port: valueFlag({ arg: 'PORT', help: 'listen port', parse: integerIn(0, 65535), default: 8000 }),
};

const cli: CommandLine<number> = {
  prefix: 'app',
  usage: formatUsage(TABLE, { synopsis: 'usage: app [flags]' }, 'APP_'),
  parse: (argv, env) => parseFlags(TABLE, argv, env, { envPrefix: 'APP_' }).values.port,
};

function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const result = readCommandLine(cli, argv, env, {
    stdout: { write: (t: string) => out.push(t) },
    stderr: { write: (t: string) => err.push(t) },
  });
  return { result, out: out.join(''), err: err.join('') };
}

describe('readCommandLine', () => {
  it('returns the parsed value and prints nothing', () => {
    expect(run(['--port', '9000'])).toEqual({
      result: { kind: 'run', value: 9000 },
      out: '',
      err: '',
    });
  });

  it.each([['--help'], ['-h']])('prints the usage on stdout for %s and ends with 0', (flag) => {
    const sut = run(['--port', 'bad', flag]);
    expect(sut.result).toEqual({ kind: 'exit', code: 0 });
    expect(sut.out).toBe(`${cli.usage}\n`);
    expect(sut.err).toBe('');
  });

  it('prints an unknown flag, named, with the usage on stderr and ends with 2', () => {
    const sut = run(['--prot', '1']);
    expect(sut.result).toEqual({ kind: 'exit', code: 2 });
    expect(sut.out).toBe('');
    expect(sut.err.split('\n')[0]).toBe('app: unknown flag --prot');
    expect(sut.err).toContain(cli.usage);
  });

  it('prints a refused value naming the variable it came from, and ends with 2', () => {
    const sut = run([], { APP_PORT: '70000' });
    expect(sut.result).toEqual({ kind: 'exit', code: 2 });
    expect(sut.err.split('\n')[0]).toBe(
      "app: invalid value '70000' for APP_PORT: expected an integer in [0, 65535]",
    );
  });

  it('lets an error that is not about usage through', () => {
    const broken: CommandLine<number> = {
      ...cli,
      parse: () => {
        throw new Error('bug');
      },
    };
    expect(() => readCommandLine(broken, [], {}, process)).toThrow('bug');
  });
});

describe('formatUsage', () => {
  it('lists every flag with its placeholder, help and default, then the variables', () => {
    const sut = formatUsage(TABLE, { synopsis: 'usage: app [flags]' }, 'APP_').split('\n');
    expect(sut[0]).toBe('usage: app [flags]');
    expect(sut).toContainEqual(
      expect.stringMatching(/^ {2}--port PORT +listen port \(default 8000\)$/),
    );
    expect(sut).toContainEqual(expect.stringMatching(/^ {2}-h, --help +print this text$/));
    expect(sut.at(-1)).toMatch(/APP_<FLAG>/);
  });
});
