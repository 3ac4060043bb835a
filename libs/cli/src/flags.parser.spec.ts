import { listFlag, switchFlag, valueFlag } from './flag-table';
import { integerIn, numberIn } from './flag-values';
import { FlagProblem, parseFlags } from './flags.parser';
import { FlagValueError, UsageError } from './usage.error';

const TABLE = {
  port: valueFlag({ arg: 'N', help: 'port', parse: integerIn(0, 65535), default: 8000 }),
  offset: valueFlag({ arg: 'N', help: 'offset', parse: numberIn({ min: -10 }), default: 0 }),
  name: valueFlag({ arg: 'S', help: 'name', parse: (raw: string) => raw, default: undefined }),
  target: listFlag({ arg: 'URL', help: 'target', parse: (item) => item.toUpperCase() }),
  quiet: switchFlag({ help: 'quiet', default: false }),
  stream: switchFlag({ help: 'stream', default: true }),
};

const problemOf = (fn: () => unknown): FlagValueError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof FlagValueError) return err;
    throw err;
  }
  throw new Error('expected a FlagValueError');
};

describe('parseFlags', () => {
  const sut = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
    parseFlags(TABLE, argv, env, { envPrefix: 'APP_' }).values;

  it('gives each flag its default when neither the flag nor its variable is set', () => {
    expect(sut([])).toEqual({
      port: 8000,
      offset: 0,
      name: undefined,
      target: [],
      quiet: false,
      stream: true,
    });
  });

  it('reads --flag value and --flag=value, the last one winning', () => {
    expect(sut(['--port', '1', '--port=2', '--name=a b'])).toMatchObject({ port: 2, name: 'a b' });
  });

  describe('negative numbers', () => {
    it.each([
      [['--offset', '-5'], -5],
      [['--offset=-5'], -5],
      [['--offset', '-.5'], -0.5],
    ])('takes %j as the value of the flag', (argv, expected) => {
      expect(sut(argv).offset).toBe(expected);
    });

    it('lets the rule refuse a negative given as a separate argument, naming flag and value', () => {
      const err = problemOf(() => sut(['--port', '-1']));
      expect(err).toMatchObject({ flag: '--port', value: '-1' });
      expect(err.message).toBe("invalid value '-1' for --port: expected an integer in [0, 65535]");
    });

    it('leaves a number after a switch alone: it is a stray argument', () => {
      expect(() => sut(['--quiet', '-5'])).toThrow(UsageError);
    });
  });

  describe('repeatable flags', () => {
    it('collects every occurrence, each through the rule', () => {
      expect(sut(['--target', 'a', '--target=b']).target).toEqual(['A', 'B']);
    });

    it('falls back to the comma-separated variable, items trimmed, empties dropped', () => {
      expect(sut([], { APP_TARGET: 'a, b,,c ' }).target).toEqual(['A', 'B', 'C']);
    });

    it('ignores the variable when the flag is given', () => {
      expect(sut(['--target', 'x'], { APP_TARGET: 'a,b' }).target).toEqual(['X']);
    });

    it('names the flag or the variable the refused item came from', () => {
      const table = {
        target: listFlag({ arg: 'N', help: 'n', parse: integerIn(1) }),
      };
      const parse = (argv: string[], env: NodeJS.ProcessEnv) =>
        parseFlags(table, argv, env, { envPrefix: 'APP_' });
      expect(problemOf(() => parse(['--target', '1', '--target', 'x'], {}))).toMatchObject({
        flag: '--target',
        value: 'x',
      });
      expect(problemOf(() => parse([], { APP_TARGET: '1,0' }))).toMatchObject({
        flag: 'APP_TARGET',
        value: '0',
      });
    });
  });

  describe('environment fallback', () => {
    it('reads PREFIX + upper-snake name when the flag is not given', () => {
      expect(sut([], { APP_PORT: '9000', APP_NAME: 'n' })).toMatchObject({ port: 9000, name: 'n' });
    });

    it('treats an empty variable as unset and lets the flag win', () => {
      expect(sut([], { APP_PORT: '' }).port).toBe(8000);
      expect(sut(['--port', '1'], { APP_PORT: 'oops' }).port).toBe(1);
    });

    it('names the variable when its value is refused', () => {
      expect(problemOf(() => sut([], { APP_PORT: 'x' }))).toMatchObject({
        flag: 'APP_PORT',
        value: 'x',
      });
    });

    it('reads no variable without a prefix, and never for switches', () => {
      expect(parseFlags(TABLE, [], { PORT: '1', APP_PORT: '1' }).values.port).toBe(8000);
      expect(sut([], { APP_QUIET: 'true' }).quiet).toBe(false);
    });

    it('says where a value came from', () => {
      const parsed = parseFlags(TABLE, ['--port', '1'], { APP_NAME: 'n' }, { envPrefix: 'APP_' });
      expect([parsed.sourceOf('port'), parsed.sourceOf('name')]).toEqual(['--port', 'APP_NAME']);
    });
  });

  it('turns switches on and, with --no-, off', () => {
    expect(sut(['--quiet', '--no-stream'])).toMatchObject({ quiet: true, stream: false });
  });

  describe('a malformed command line', () => {
    it('names an unknown flag, and not the other arguments, which may hold secrets', () => {
      const err = problemOf(() => sut(['--name=s3cret', '--prot', '8000']));
      expect(err.flag).toBe('--prot');
      expect(err.message).toContain('--prot');
      expect(err.message).not.toContain('s3cret');
    });

    it.each([[['--port']], [['--quiet=yes']], [['extra']]])('refuses %j', (argv) => {
      expect(() => sut(argv)).toThrow(UsageError);
    });

    // Not "invalid value '--prot' for --prot: Unknown option '--prot'. To specify a positional
    // argument starting with a '-', …": what the command line got wrong, in words.
    it.each([
      [['--prot', '8000'], 'unknown flag --prot'],
      [['--quiet', '--port'], '--port needs a value'],
      [['--quiet=yes'], '--quiet takes no value'],
      [['--port', '1', 's3cret'], 'unexpected argument (argument 3): every flag starts with --'],
    ])('says what is wrong with %j', (argv, message) => {
      expect(problemOf(() => sut(argv)).message).toBe(message);
    });

    it('accepts positionals only when asked to', () => {
      expect(parseFlags(TABLE, ['run', '--port', '1'], {}, { positionals: true })).toMatchObject({
        positionals: ['run'],
        values: { port: 1 },
      });
    });

    it("hands the app's error factory the arguments as typed", () => {
      const problems: FlagProblem[] = [];
      const error = (p: FlagProblem) => {
        problems.push(p);
        return new UsageError(p.reason);
      };
      expect(() => parseFlags(TABLE, ['--port', '-5'], {}, { error })).toThrow(UsageError);
      expect(() => parseFlags(TABLE, ['--quiet=yes'], {}, { error })).toThrow(UsageError);
      expect(problems.map((p) => p.given)).toEqual(['--port -5', '--quiet=yes']);
    });
  });
});
