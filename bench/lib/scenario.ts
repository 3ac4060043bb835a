/**
 * The scenario API (bench/README.md): a scenario declares its plan (rounds, expected wall time),
 * runs its subjects in interleaved rounds, and returns figures, one value per round, each with
 * its target if it has one; the report computes the median, the spread and the verdict.
 */
import type { BenchContext } from './context';
import type { ProcessInfo } from './processes';
import { rotate } from './util';

/** What a figure is judged against, e.g. `atLeast(0.9)`, `below(10)` or `within(0.9, 1.1)`. */
export type Target =
  | { readonly op: '≥' | '≤' | '<'; readonly value: number }
  /** Between `value` and `upper`, both included. */
  | { readonly op: 'within'; readonly value: number; readonly upper: number };

export const atLeast = (value: number): Target => ({ op: '≥', value });
export const atMost = (value: number): Target => ({ op: '≤', value });
export const below = (value: number): Target => ({ op: '<', value });
export const within = (lo: number, hi: number): Target => ({ op: 'within', value: lo, upper: hi });

/** One figure: a value per round (or window, or block of trials), never a single run. */
export interface Figure {
  readonly name: string;
  /** `×` for ratios (two decimals in the report), else a unit such as `ms`, `req/s`, `MB`, `%`. */
  readonly unit: string;
  readonly rounds: readonly number[];
  /** None: a reference or context figure, reported without a verdict. */
  readonly target?: Target;
}

export const figure = (
  name: string,
  unit: string,
  rounds: readonly number[],
  target?: Target,
): Figure => ({ name, unit, rounds: rounds.filter(Number.isFinite), target });

/** `met`: every round meets the target; `missed`: none does; `straddles`: some do. */
export type Verdict = 'met' | 'missed' | 'straddles';

export function meets(t: Target, x: number): boolean {
  if (t.op === '≥') return x >= t.value;
  if (t.op === '≤') return x <= t.value;
  if (t.op === 'within') return x >= t.value && x <= t.upper;
  return x < t.value;
}

/** Null for a figure without a target or without any round. */
export function verdict(f: Figure): Verdict | null {
  if (!f.target || f.rounds.length === 0) return null;
  const t = f.target;
  const ok = f.rounds.filter((x) => meets(t, x)).length;
  if (ok === f.rounds.length) return 'met';
  return ok === 0 ? 'missed' : 'straddles';
}

/** How many rounds a run takes and how long it should last on an idle machine. */
export interface Plan {
  readonly rounds: number;
  /** Expected wall time in seconds, start-up included: the bench adds these up before it starts. */
  readonly seconds: number;
}

export interface ScenarioResult {
  readonly figures: Figure[];
  /** Markdown: the method and the round-by-round tables. */
  readonly details: string;
  /** The processes whose figures the scenario compares, as `/proc` showed them. */
  readonly processes: ProcessInfo[];
  /** SVG charts, written beside the report (`bench/<name>.svg`) and shown after `details`. */
  readonly plots?: Plot[];
}

export interface Plot {
  /** File name without extension, unique in the run. */
  readonly name: string;
  readonly alt: string;
  readonly svg: string;
}

export interface Scenario {
  /** Short name for `--only` (e.g. `rejection`). */
  readonly id: string;
  readonly title: string;
  plan(quick: boolean): Plan;
  run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult>;
}

/**
 * Runs every subject once per round, the order rotated each round (A B C, B C A, …), so that a
 * change of the machine's speed meets every subject alike.
 */
export async function interleaved<S>(
  rounds: number,
  subjects: readonly S[],
  run: (subject: S, round: number) => Promise<void>,
): Promise<void> {
  for (let r = 0; r < rounds; r++) for (const s of rotate(subjects, r)) await run(s, r);
}
