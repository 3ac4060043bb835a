import { setsFlag, setUnlessChosen } from './node-flags';

/** The V8 flag the frontend sets for itself when it starts (`turnOffPretenuring`). */
export const NO_PRETENURING_FLAG = '--no-allocation-site-pretenuring';

const CHOICES = [
  '--allocation-site-pretenuring',
  '--allocation_site_pretenuring',
  NO_PRETENURING_FLAG,
  '--no_allocation_site_pretenuring',
];

/** Whether Node was started with V8's allocation-site pretenuring set either way. */
export function pretenuringChosen(execArgv: readonly string[]): boolean {
  return setsFlag(execArgv, CHOICES);
}

/**
 * Turns off V8's allocation-site pretenuring for the rest of the process, unless Node's command
 * line set it either way (it cannot come through `NODE_OPTIONS`, which refuses it). Returns
 * whether it did.
 *
 * V8 allocates objects directly in the old generation from a literal whose objects mostly
 * survived a young collection. Under a steady stream of short requests that guess is made from
 * the few in flight at each collection and, once made, it stays: from then on every request's
 * objects go to the old generation, young collections scan the pointers from them (4 ms each
 * instead of 0.2 ms here), and full collections clean up what scavenges used to. Whether a given
 * process fell into it was a matter of luck: on the rejection path, three frontends out of three
 * spent 21–23 µs of CPU per 503 with it and 17–18 µs without (0.67 against 0.17 s of young
 * collections in 5 s of load), a likely cause of much of the spread between the bench's runs.
 * The flag is read as objects are allocated, so setting it once running takes effect.
 */
export function turnOffPretenuring(execArgv: readonly string[] = process.execArgv): boolean {
  return setUnlessChosen(execArgv, CHOICES, NO_PRETENURING_FLAG);
}
