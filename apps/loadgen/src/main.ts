import { runLoadgenCli } from './loadgen.cli';

// A second Ctrl-C falls back to Node's default and ends the process at once.
runLoadgenCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  onInterrupt: (handler) => process.once('SIGINT', handler),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(
      `loadgen: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  },
);
