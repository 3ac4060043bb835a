/**
 * One app's flags as data: each entry says how its text is read, its default and its help line.
 * `parseFlags` reads argv (and the environment) against it; `formatUsage` prints it.
 */

/** A flag that takes one value; the last one given wins. */
export interface ValueFlag<T> {
  readonly kind: 'value';
  /** Placeholder in the usage text: `N`, `URL`, `none|vllm`. */
  readonly arg: string;
  readonly help: string;
  /** Turns the text into the value; throws `InvalidFlagValue` for text it refuses. */
  readonly parse: (raw: string) => T;
  /** The value when neither the flag nor its variable is given (never parsed). */
  readonly default: T;
}

/** A repeatable flag; its variable holds a comma-separated list. Default: empty. */
export interface ListFlag<T> {
  readonly kind: 'list';
  readonly arg: string;
  readonly help: string;
  readonly parse: (item: string) => T;
}

/** A flag without a value; `--no-NAME` turns it off. Not read from variables. */
export interface SwitchFlag {
  readonly kind: 'switch';
  readonly help: string;
  readonly default: boolean;
}

export type Flag = ValueFlag<unknown> | ListFlag<unknown> | SwitchFlag;

/** Flag name (without `--`) to its entry, in the order the usage text lists them. */
export type FlagTable = Readonly<Record<string, Flag>>;

/** What `parseFlags` returns for a table: one typed value per flag. */
export type FlagValues<T extends FlagTable> = {
  [K in keyof T]: T[K] extends ValueFlag<infer V>
    ? V
    : T[K] extends ListFlag<infer I>
      ? I[]
      : boolean;
};

export function valueFlag<T, D = T>(spec: {
  arg: string;
  help: string;
  parse: (raw: string) => T;
  default: D;
}): ValueFlag<T | D> {
  return { kind: 'value', ...spec };
}

export function listFlag<T = string>(spec: {
  arg: string;
  help: string;
  parse?: (item: string) => T;
}): ListFlag<T> {
  const parse = spec.parse ?? ((item: string) => item as T);
  return { kind: 'list', arg: spec.arg, help: spec.help, parse };
}

export function switchFlag(spec: { help: string; default: boolean }): SwitchFlag {
  return { kind: 'switch', ...spec };
}

/** `SLUICE_` + `http-port` → `SLUICE_HTTP_PORT`. */
export function envName(prefix: string, flag: string): string {
  return `${prefix}${flag.replace(/-/g, '_').toUpperCase()}`;
}
