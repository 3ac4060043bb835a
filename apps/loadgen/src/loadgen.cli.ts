import { LoadRun } from './load.runner';
import {
  LOADGEN_USAGE,
  LoadgenCommand,
  LoadgenOptions,
  LoadgenUsageError,
  parseLoadgenArgs,
} from './loadgen.options';
import { ProgressOutput } from './progress.reporter';
import { requestPath } from './prompt.builder';
import { formatSummary } from './summary.report';

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: ProgressOutput;
  /** Lets the caller wire Ctrl-C to the run. */
  onInterrupt(handler: () => void): void;
}

/** Exit codes: 0 ran (503s are an expected outcome), 1 target unreachable, 2 bad flag. */
export async function runLoadgenCli(argv: readonly string[], io: CliIo): Promise<number> {
  let command: LoadgenCommand;
  try {
    command = parseLoadgenArgs(argv);
  } catch (err) {
    if (!(err instanceof LoadgenUsageError)) throw err;
    io.stderr.write(`loadgen: ${err.message}\n\n${LOADGEN_USAGE}`);
    return 2;
  }
  if (command.kind === 'help') {
    io.stdout.write(LOADGEN_USAGE);
    return 0;
  }
  const { options } = command;
  if (!options.quiet) io.stderr.write(`${describeRun(options)}\n`);
  const run = new LoadRun(options, io.stderr);
  io.onInterrupt(() => run.interrupt());
  const { summary, unreachable } = await run.execute();
  const text = formatSummary(summary);
  if (options.json) {
    // stdout stays machine-readable: the JSON object is its only (and so its last) line.
    if (!options.quiet) io.stderr.write(`${text}\n`);
    io.stdout.write(`${JSON.stringify(summary)}\n`);
  } else {
    io.stdout.write(`${text}\n`);
  }
  if (unreachable !== null) {
    io.stderr.write(`loadgen: ${unreachable}\n`);
    return 1;
  }
  return summary.interrupted ? 130 : 0;
}

function describeRun(o: LoadgenOptions): string {
  const target = `${o.url.origin}${requestPath(o)}`;
  const shape = `${o.stream ? 'stream' : 'unary'}, ~${o.promptTokens} prompt tokens, max_tokens ${o.maxTokens}`;
  return `loadgen: ${o.rate} req/s for ${o.durationS} s -> POST ${target} (${shape}), max in flight ${o.maxInflight}, drain timeout ${o.drainTimeoutS} s`;
}
