import { readCommandLine } from '@sluice/cli';
import { LoadRun } from './load.runner';
import { LOADGEN_USAGE, LoadgenOptions, parseLoadgenOptions } from './loadgen.options';
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
  const cli = { prefix: 'loadgen', usage: LOADGEN_USAGE, parse: parseLoadgenOptions };
  const read = readCommandLine(cli, [...argv], {}, io);
  if (read.kind === 'exit') return read.code;
  const options = read.value;
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
