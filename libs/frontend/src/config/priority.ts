import { InvalidFlagValue } from '@sluice/cli';

/**
 * The priority classes of docs/security.md#priority-classes-who-may-set-x-sluice-priority, in the order the router queue serves them: critical
 * first, sheddable last. A request's class comes from a header (`priority/`); every place that
 * lists the classes (metrics labels, per-class free lists, the status page) is derived from here.
 */
export const PRIORITY_CLASSES = ['critical', 'standard', 'sheddable'] as const;

export type PriorityClass = (typeof PRIORITY_CLASSES)[number];

/** Whether class `a` is served after class `b` (sheddable is lower than standard). */
export function isLowerPriority(a: PriorityClass, b: PriorityClass): boolean {
  return PRIORITY_CLASSES.indexOf(a) > PRIORITY_CLASSES.indexOf(b);
}

/** The class served just before `c` (critical for standard), or undefined for critical. */
export function classAbove(c: PriorityClass): PriorityClass | undefined {
  const i = PRIORITY_CLASSES.indexOf(c);
  return i > 0 ? PRIORITY_CLASSES[i - 1] : undefined;
}

/** A request without the header, or with the header disabled (`--priority-header none`). */
export const DEFAULT_PRIORITY: PriorityClass = 'standard';

export const DEFAULT_PRIORITY_HEADER = 'x-sluice-priority';

/** One value per class, e.g. each class's thresholds or free workers. */
export type PerClass<T> = { [C in PriorityClass]: T };

/** Builds a `PerClass` value, one call per class, in `PRIORITY_CLASSES` order. */
export function perClass<T>(make: (c: PriorityClass) => T): PerClass<T> {
  return { critical: make('critical'), standard: make('standard'), sheddable: make('sheddable') };
}

/**
 * The factor each class's thresholds are multiplied by (`--priority-factor`). `standard` is
 * always 1: its thresholds are the configured ones. Sheddable ≤ 1 ≤ critical, so a worker busy
 * for critical is busy for standard, and one busy for standard is busy for sheddable.
 */
export interface PriorityFactors {
  readonly sheddable: number;
  readonly critical: number;
}

export const DEFAULT_PRIORITY_FACTORS: PriorityFactors = Object.freeze({
  sheddable: 0.8,
  critical: 1.2,
});

const FACTOR_USAGE =
  'expected CLASS=F, comma-separated: sheddable=F with 0 <= F <= 1, critical=F with F >= 1 ' +
  '(standard uses the configured thresholds)';

/**
 * One `--priority-factor` item: `sheddable=0.8`, `critical=1.2` or both comma-separated
 * (`sheddable=0.5,critical=2`). Later items win over earlier ones.
 */
export function parsePriorityFactors(item: string): Partial<PriorityFactors> {
  const out: { sheddable?: number; critical?: number } = {};
  for (const part of item.split(',')) {
    const [name, value, extra] = part.trim().split('=');
    const f = value === undefined || value.trim() === '' ? NaN : Number(value);
    const ok =
      extra === undefined &&
      Number.isFinite(f) &&
      ((name === 'sheddable' && f >= 0 && f <= 1) || (name === 'critical' && f >= 1));
    if (!ok) throw new InvalidFlagValue(FACTOR_USAGE);
    if (name === 'sheddable') out.sheddable = f;
    else out.critical = f;
  }
  return out;
}

/** The factors in force: the defaults, overridden item by item in the order given. */
export function mergePriorityFactors(items: readonly Partial<PriorityFactors>[]): PriorityFactors {
  let merged: PriorityFactors = DEFAULT_PRIORITY_FACTORS;
  for (const item of items) merged = { ...merged, ...item };
  return Object.freeze(merged);
}

/** An HTTP field name (RFC 9110 token), compared lower-case as Node hands headers over. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

/** `--priority-header NAME|none`: the header's name in lower case, or null when disabled. */
export function parsePriorityHeader(raw: string): string | null {
  if (raw === 'none') return null;
  if (!HEADER_NAME.test(raw)) {
    throw new InvalidFlagValue('expected an HTTP header name (letters, digits, -) or none');
  }
  return raw.toLowerCase();
}
