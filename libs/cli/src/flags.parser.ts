import { redactCredentials } from '@sluice/contracts';
import { parseArgs, ParseArgsConfig } from 'node:util';
import { envName, Flag, FlagTable, FlagValues } from './flag-table';
import { FlagValueError, InvalidFlagValue, UsageError, valueMessage } from './usage.error';

/** A refused flag, variable or argument, for the app to turn into its own error. */
export interface FlagProblem {
  /** `--flag`, the variable's name, or the offending option of a malformed command line. */
  readonly flag: string;
  /** The refused text as it may be printed (a secret is replaced). */
  readonly value: string;
  readonly reason: string;
  /** The arguments as typed (`--rate -5`); may hold a secret. */
  readonly given: string;
  /**
   * The sentence to print, without secrets: "invalid value 'X' for --flag: reason", or for a
   * command line that cannot be read "unknown flag --prot", "--port needs a value", ….
   */
  readonly message: string;
  /** `value`: a flag or variable whose text its parser refused; `syntax`: parseArgs could not read. */
  readonly kind: 'value' | 'syntax';
}

export interface FlagParseOptions {
  /** Each flag's fallback variable is this prefix + upper-snake name; unset: flags only. */
  readonly envPrefix?: string;
  /** Whether arguments that are not flags (a command) are allowed. */
  readonly positionals?: boolean;
  /** Builds the app's error; default `FlagValueError`. */
  readonly error?: (problem: FlagProblem) => UsageError;
}

export interface ParsedFlags<T extends FlagTable> {
  readonly values: FlagValues<T>;
  readonly positionals: string[];
  /** `--flag` if the command line gave it, else the variable: for errors found after parsing. */
  readonly sourceOf: (name: keyof T & string) => string;
}

type Raw = Record<string, string | boolean | (string | boolean)[] | undefined>;

/**
 * The `error` option for an app whose errors are a FlagValueError subclass: each problem becomes
 * one, with the parser's message (`error: flagErrorAs(FrontendConfigError)`).
 */
export function flagErrorAs<E extends UsageError>(
  ErrorClass: new (flag: string, value: string, reason: string, message: string) => E,
): (problem: FlagProblem) => E {
  return (p) => new ErrorClass(p.flag, p.value, p.reason, p.message);
}

const defaultError = flagErrorAs(FlagValueError);

/** Reads argv (without node and script) and the environment against `table`. */
export function parseFlags<T extends FlagTable>(
  table: T,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: FlagParseOptions = {},
): ParsedFlags<T> {
  const error = options.error ?? defaultError;
  let parsed: { values: Raw; positionals: string[] };
  try {
    parsed = parseArgs({
      args: bindNegativeNumbers(table, argv),
      options: argsOptions(table),
      strict: true,
      allowPositionals: options.positionals ?? false,
      allowNegative: Object.values(table).some((f) => f.kind === 'switch'),
    });
  } catch (err) {
    throw error(syntaxProblem(err, argv, table));
  }
  const reader = new FlagReader(argv, parsed.values, env, options.envPrefix, error);
  const values = Object.fromEntries(
    Object.entries(table).map(([name, flag]) => [name, reader.read(name, flag)]),
  ) as FlagValues<T>;
  return { values, positionals: parsed.positionals, sourceOf: (name) => reader.sourceOf(name) };
}

function argsOptions(table: FlagTable): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(
    Object.entries(table).map(([name, flag]) => [
      name,
      flag.kind === 'switch'
        ? { type: 'boolean' as const }
        : { type: 'string' as const, multiple: flag.kind === 'list' },
    ]),
  );
}

/**
 * parseArgs takes `--retry-after-secs -1` for two options and calls it ambiguous; bound as
 * `--retry-after-secs=-1`, the value reaches its rule, whose message says what is wrong with it.
 */
function bindNegativeNumbers(table: FlagTable, argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [arg, next] = [argv[i], argv[i + 1]];
    const flag = arg.startsWith('--') ? table[arg.slice(2)] : undefined;
    if (
      flag !== undefined &&
      flag.kind !== 'switch' &&
      next !== undefined &&
      /^-[\d.]/.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * A command line parseArgs cannot read, said in a sentence that names only the offending flag:
 * the rest of the command line may hold tokens or passwords.
 */
function syntaxProblem(err: unknown, argv: readonly string[], table: FlagTable): FlagProblem {
  const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
  const code = (err as { code?: unknown } | null)?.code;
  const option = /'(-[^' =]+)/.exec(reason)?.[1];
  const flag = option ?? 'command line';
  const given = option ? givenForm(argv, option) : argv.join(' ');
  let message: string;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') message = `unknown flag ${flag}`;
  else if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const at = argv.findIndex((a) => !a.startsWith('-') && reason.includes(`'${a}'`));
    message = `unexpected argument${at >= 0 ? ` (argument ${at + 1})` : ''}: every flag starts with --`;
  } else if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // A switch given a value (`--quiet=yes`, `--no-quiet=yes`), or a value flag given none.
    const name = flag.replace(/^--(no-)?/, '');
    message = table[name]?.kind === 'switch' ? `${flag} takes no value` : `${flag} needs a value`;
  } else message = `${flag}: ${reason}`;
  return { flag, value: flag, reason, given, message, kind: 'syntax' };
}

/** The last `--flag value` or `--flag=value` in argv, as typed. */
function givenForm(argv: readonly string[], flag: string): string {
  const at = argv.findLastIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (at < 0) return flag;
  return argv.slice(at, argv[at].includes('=') ? at + 1 : at + 2).join(' ');
}

class FlagReader {
  constructor(
    private readonly argv: readonly string[],
    private readonly values: Raw,
    private readonly env: NodeJS.ProcessEnv,
    private readonly envPrefix: string | undefined,
    private readonly error: (problem: FlagProblem) => UsageError,
  ) {}

  read(name: string, flag: Flag): unknown {
    switch (flag.kind) {
      case 'switch':
        return this.values[name] ?? flag.default;
      case 'value': {
        const raw = (this.values[name] as string | undefined) ?? this.fromEnv(name);
        return raw === undefined ? flag.default : this.apply(name, raw, flag.parse);
      }
      case 'list': {
        const given = this.values[name] as string[] | undefined;
        const items = given?.length ? given : this.listFromEnv(name);
        return items.map((item) => this.apply(name, item, flag.parse, `--${name} ${item}`));
      }
    }
  }

  sourceOf(name: string): string {
    const given = this.values[name];
    const fromArgs = Array.isArray(given) ? given.length > 0 : given !== undefined;
    return fromArgs || this.envPrefix === undefined ? `--${name}` : envName(this.envPrefix, name);
  }

  private apply<V>(name: string, raw: string, parse: (raw: string) => V, item?: string): V {
    try {
      return parse(raw);
    } catch (err) {
      if (!(err instanceof InvalidFlagValue)) throw err;
      const flag = this.sourceOf(name);
      const typed = item ?? givenForm(this.argv, flag);
      const given = flag.startsWith('--') ? typed : `${flag}=${raw}`;
      // A refused URL is echoed without its user-info, in the value and in the rule's reason.
      const value = err.shown ?? redactCredentials(raw);
      const reason = redactCredentials(err.reason);
      const message = valueMessage(flag, value, reason);
      throw this.error({ flag, value, reason, given, message, kind: 'value' });
    }
  }

  /** An empty variable counts as unset, so `SLUICE_X=` in a compose file changes nothing. */
  private fromEnv(name: string): string | undefined {
    if (this.envPrefix === undefined) return undefined;
    const value = this.env[envName(this.envPrefix, name)];
    return value === '' ? undefined : value;
  }

  private listFromEnv(name: string): string[] {
    return (this.fromEnv(name) ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  }
}
