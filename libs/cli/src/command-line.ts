import { redactCredentials } from '@sluice/contracts';
import { UsageError } from './usage.error';

/** How one program reads its command line. */
export interface CommandLine<T> {
  /** What error lines start with, e.g. `sluice-frontend` (`sluice-frontend: invalid ...`). */
  readonly prefix: string;
  readonly usage: string;
  parse(argv: string[], env: NodeJS.ProcessEnv): T;
}

export interface CommandLineIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

export type CommandLineResult<T> = { kind: 'run'; value: T } | { kind: 'exit'; code: 0 | 2 };

/** True when argv asks for the usage text. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/**
 * The one path every app takes: `--help` prints the usage (exit 0); a `UsageError` prints its
 * message and the usage (exit 2); anything else is a bug and is thrown.
 */
export function readCommandLine<T>(
  cli: CommandLine<T>,
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: CommandLineIo,
): CommandLineResult<T> {
  if (wantsHelp(argv)) {
    io.stdout.write(`${cli.usage}\n`);
    return { kind: 'exit', code: 0 };
  }
  try {
    return { kind: 'run', value: cli.parse(argv, env) };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    writeUsageError(io, cli, err.message);
    return { kind: 'exit', code: 2 };
  }
}

/** Every usage error of every app is printed here, so no URL's credentials ever are. */
function writeUsageError(io: CommandLineIo, cli: UsageOf, message: string): void {
  const prefix = cli.prefix ? `${cli.prefix}: ` : '';
  io.stderr.write(`${prefix}${redactCredentials(message)}\n${cli.usage}\n`);
}

type UsageOf = Pick<CommandLine<unknown>, 'prefix' | 'usage'>;

/** For a usage error found after parsing (a file a flag names): message, usage, exit 2. */
export function exitWithUsage(cli: UsageOf, message: string): never {
  writeUsageError(process, cli, message);
  process.exit(2);
}

/** `readCommandLine` on this process: returns the parsed value or ends the process. */
export function parseOrExit<T>(
  cli: CommandLine<T>,
  argv: string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): T {
  const result = readCommandLine(cli, argv, env, process);
  if (result.kind === 'exit') process.exit(result.code);
  return result.value;
}
