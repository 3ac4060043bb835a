import { setsFlag, setUnlessChosen } from './node-flags';

/** The V8 flag the frontend sets for itself when it starts (`scavengeWhileMarking`). */
export const OVERLAPPING_GC_PHASES_FLAG = '--no-separate-gc-phases';

const CHOICES = [
  '--separate-gc-phases',
  '--separate_gc_phases',
  OVERLAPPING_GC_PHASES_FLAG,
  '--no_separate_gc_phases',
  // V8's other young collector needs the phases apart; an operator who picked it keeps them so.
  '--minor-ms',
  '--minor_ms',
];

/** Whether Node was started with V8's separate GC phases set either way (or its other young collector). */
export function gcPhasesChosen(execArgv: readonly string[]): boolean {
  return setsFlag(execArgv, CHOICES);
}

/**
 * Lets V8 collect the young generation while it marks the old one (`--no-separate-gc-phases`,
 * Node 20's V8 default; Node 24's V8 keeps the two apart), unless Node's command line chose
 * either way (`NODE_OPTIONS` refuses the flag). Returns whether it did.
 *
 * With the phases apart, no young collection runs from the start of a full collection's
 * incremental marking to its end. Under load the young generation then fills in a few hundred
 * milliseconds, which forces the full collection to finish at once: the rest of the marking and
 * the evacuation of everything allocated meanwhile (tens of MB) happen in one pause. On a
 * frontend pinned to one core in bench scenario 2's pattern (`--trace-gc-nvp`), those pauses took
 * 22-109 ms (median 62); with young collections during marking 7.5-36 ms (median 15). Side by
 * side at the maximum rate, 64-87 ms each against 9-18 ms; at half of it they come more often on
 * the smaller heap they leave, and the p99 stayed within its spread (docs/operations.md, "Memory").
 * Set before the app's modules load (`apps/frontend/src/v8-settings.ts`), like the others.
 */
export function scavengeWhileMarking(execArgv: readonly string[] = process.execArgv): boolean {
  return setUnlessChosen(execArgv, CHOICES, OVERLAPPING_GC_PHASES_FLAG);
}
