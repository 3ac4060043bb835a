import { ProcessGroup } from '@sluice/testkit';
import { ForeignLoadMonitor } from './procfs';
import { maxOf, median, minOf } from './util';

/** Where the load generator and the server under test run (see docs/benchmarks.md). */
export const CPU = { server: '0', client: '1' } as const;

export interface BenchContext {
  readonly quick: boolean;
  readonly profile: boolean;
  /** Thresholds of the shedding-on frontend in scenario 7 (beside token-capacity). */
  readonly sheddingFlags: string[];
  /** Scenario 7's TTFT-objective frontend: its flags beside `--ttft-slo-ms`. */
  readonly objectiveFlags: string[];
  /** Shared NATS for the ordinary scenarios. */
  readonly natsUrl: string;
  /** PostgreSQL URL of the bench's own database (created and dropped by the bench). */
  readonly databaseUrl: string;
  readonly tmpDir: string;
  readonly logDir: string;
  readonly docsDir: string;
  readonly foreign: ForeignLoadMonitor;
  log(message: string): void;
  group(): ProcessGroup;
}

export type Verdict = 'pass' | 'MISS' | 'n/a';

/** One row of the results table. */
export interface Figure {
  scenario: number;
  name: string;
  target: string;
  unit: string;
  median: number | null;
  min: number | null;
  max: number | null;
  verdict: Verdict;
  note?: string;
}

export interface ScenarioResult {
  figures: Figure[];
  /** Markdown with the scenario's own tables and method notes. */
  details: string;
  /** Markdown: what limits each figure that misses its target, with the evidence seen. */
  analysis: string[];
  /** SVG plots, written to docs/bench/<name>.svg and shown in the report. */
  plots?: Array<{ name: string; svg: string; alt: string }>;
}

export interface Scenario {
  id: number;
  title: string;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}

/** A figure over rounds (or trials): the median of `xs`, with their spread as min and max. */
export function figureOver(
  scenario: number,
  name: string,
  xs: number[],
  target: string,
  unit: string,
  v: Verdict,
): Figure {
  return {
    scenario,
    name,
    target,
    unit,
    median: median(xs),
    min: minOf(xs),
    max: maxOf(xs),
    verdict: v,
  };
}

export function verdict(ok: boolean | null): Verdict {
  if (ok === null) return 'n/a';
  return ok ? 'pass' : 'MISS';
}

/**
 * Warm-up before measuring a server: the frontend needs much longer than the reference
 * servers before the JIT has optimised its request path (its rate still rose for ~30 s).
 */
export function warmupS(quick: boolean, subject: string): number {
  if (quick) return subject === 'sluice' ? 3 : 1;
  return subject === 'sluice' ? 15 : 5;
}
