/**
 * Whether `args` (Node's own arguments, or `NODE_OPTIONS` split on spaces) set one of `flags`,
 * alone or as `flag=value`.
 */
export function setsFlag(args: readonly string[], flags: readonly string[]): boolean {
  return args.some((a) => flags.some((flag) => a === flag || a.startsWith(`${flag}=`)));
}
