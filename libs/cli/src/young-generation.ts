import { setsFlag } from './node-flags';

/**
 * The V8 setting the frontend runs with (docker/frontend.Dockerfile's `NODE_OPTIONS`, the npm
 * scripts, and every frontend the tests and the bench start): the young generation capped at
 * 16 MB per semi-space. Node 24's V8 otherwise grows it to 64 MB per semi-space under a steady
 * stream of reports and requests, and the frontend's RSS saws ~100 MB higher for it (bench
 * scenario 8 measures both). V8 reads the cap only when the process starts, so it must be a
 * flag of `node` itself, not something the app can set once running.
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=16';

const CAPS = ['--max-semi-space-size', '--max_semi_space_size', '--max-young-generation-size'];

/**
 * Whether Node was started with the young generation capped (by any value): in its own
 * arguments (`process.execArgv`) or in `NODE_OPTIONS`.
 */
export function youngGenerationCapped(execArgv: readonly string[], nodeOptions = ''): boolean {
  return setsFlag([...execArgv, ...nodeOptions.split(/\s+/)], CAPS);
}

/** A line for the start-up log when the frontend runs without the cap; null when it has one. */
export function youngGenerationAdvice(
  execArgv: readonly string[],
  nodeOptions = '',
): string | null {
  if (youngGenerationCapped(execArgv, nodeOptions)) return null;
  return (
    `V8's young generation is not capped: RSS under load runs ~100 MB higher than it needs to; ` +
    `start node with ${YOUNG_GENERATION_FLAG} (e.g. NODE_OPTIONS=${YOUNG_GENERATION_FLAG}), ` +
    'as the container image does (docs/operations.md, "Memory")'
  );
}
