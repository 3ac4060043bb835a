import { InvalidFlagValue } from './usage.error';

/**
 * Value rules shared by the apps' flag tables. Each returns a `parse` for a table entry; the
 * reason it gives is printed after "invalid value 'X' for --flag: ".
 */

export interface NumberRule {
  readonly min: number;
  readonly max?: number;
  readonly integer?: boolean;
  /** `min` itself is refused (a rate must be > 0). */
  readonly exclusiveMin?: boolean;
}

/** A number as JavaScript reads it (`8000`, `0.85`, ` 5 `, `1e3`), checked against the rule. */
export function numberIn(rule: NumberRule): (raw: string) => number {
  const { min, max, integer = false, exclusiveMin = false } = rule;
  const kind = integer ? 'an integer' : 'a finite number';
  const lower = exclusiveMin ? `(${min}` : `[${min}`;
  const range = max === undefined ? `${exclusiveMin ? '>' : '>='} ${min}` : `in ${lower}, ${max}]`;
  return (raw) => {
    const n = raw.trim() === '' ? NaN : Number(raw);
    const ok =
      Number.isFinite(n) &&
      (!integer || Number.isSafeInteger(n)) &&
      (exclusiveMin ? n > min : n >= min) &&
      (max === undefined || n <= max);
    if (!ok) throw new InvalidFlagValue(`expected ${kind} ${range}`);
    return n;
  };
}

export const integerIn = (min: number, max?: number): ((raw: string) => number) =>
  numberIn({ min, max, integer: true });

export function oneOf<T extends string>(allowed: readonly T[]): (raw: string) => T {
  return (raw) => {
    const value = allowed.find((candidate) => candidate === raw);
    if (value === undefined) throw new InvalidFlagValue(`expected one of ${allowed.join(', ')}`);
    return value;
  };
}

export function nonEmpty(raw: string): string {
  if (raw.trim() === '') throw new InvalidFlagValue('must not be empty');
  return raw;
}

export function matching(re: RegExp, expected: string): (raw: string) => string {
  return (raw) => {
    if (!re.test(raw)) throw new InvalidFlagValue(`expected ${expected}`);
    return raw;
  };
}

/** A NATS server URL (a refused one is echoed without its user-info, like every flag value). */
export function natsUrl(raw: string): string {
  if (!/^(nats|tls|ws|wss):\/\/[^\s]+$/.test(raw) || !URL.canParse(raw)) {
    throw new InvalidFlagValue('expected a URL like nats://127.0.0.1:4222');
  }
  return raw;
}

/** A PostgreSQL URL; a refused one is never echoed, since it may hold a password. */
export function postgresUrl(raw: string): string {
  if (!/^postgres(ql)?:\/\//.test(raw) || !URL.canParse(raw)) {
    throw new InvalidFlagValue('expected postgres://user@host:port/db', '<hidden>');
  }
  return raw;
}
