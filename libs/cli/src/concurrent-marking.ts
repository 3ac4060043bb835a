import { availableParallelism } from 'node:os';
import { setsFlag, setUnlessChosen } from './node-flags';

/** The V8 flag the frontend sets for itself on one CPU (`markOnMainThreadOnOneCpu`). */
export const NO_CONCURRENT_MARKING_FLAG = '--no-concurrent-marking';

const CHOICES = [
  '--concurrent-marking',
  '--concurrent_marking',
  NO_CONCURRENT_MARKING_FLAG,
  '--no_concurrent_marking',
  '--single-threaded-gc',
  '--single_threaded_gc',
  '--single-threaded',
  '--single_threaded',
];

/** Whether Node was started with V8's concurrent marking set either way (or all GC on one thread). */
export function concurrentMarkingChosen(execArgv: readonly string[]): boolean {
  return setsFlag(execArgv, CHOICES);
}

/**
 * With one CPU to run on (an affinity mask or a container's CPU quota, as Node counts them),
 * turns off V8's concurrent marking for the rest of the process, unless Node's command line
 * chose either way (`NODE_OPTIONS` refuses the flag). Returns whether it did.
 *
 * A full collection marks the old generation on helper threads while JavaScript runs. With one
 * CPU those threads can only run by taking it from the event loop, for whole scheduler slices
 * at a time: on a frontend pinned to one core at 6,600 proxied req/s, each full collection
 * (every ~10 s there) held the loop up to 16-26 ms several times within ~70 ms, and the p99
 * of three 20 s runs was 22-27 ms. Marked on the main thread instead, in V8's own small
 * incremental steps, the same runs gave 6.5-8 ms; the marking work is the same, on the same
 * CPU. With more than one CPU the helpers run beside the loop, and nothing is changed.
 * Call it before the app's modules load: called in createFrontendApp, after them, it left the
 * same runs at 17-26 ms, so the frontend's main.ts imports `v8-settings.ts` before anything else.
 */
export function markOnMainThreadOnOneCpu(
  execArgv: readonly string[] = process.execArgv,
  cpus: number = availableParallelism(),
): boolean {
  return cpus === 1 && setUnlessChosen(execArgv, CHOICES, NO_CONCURRENT_MARKING_FLAG);
}
