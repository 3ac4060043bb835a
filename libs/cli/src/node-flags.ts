import { setFlagsFromString } from 'node:v8';

/**
 * Whether `args` (Node's own arguments, or `NODE_OPTIONS` split on spaces) set one of `flags`,
 * alone or as `flag=value`.
 */
export function setsFlag(args: readonly string[], flags: readonly string[]): boolean {
  return args.some((a) => flags.some((flag) => a === flag || a.startsWith(`${flag}=`)));
}

/**
 * Sets V8's `flag` for the rest of the process unless Node's command line (`execArgv`) already
 * chose one of `choices`; returns whether it did.
 */
export function setUnlessChosen(
  execArgv: readonly string[],
  choices: readonly string[],
  flag: string,
): boolean {
  if (setsFlag(execArgv, choices)) return false;
  setFlagsFromString(flag);
  return true;
}
