import { Figure } from '../lib/context';
import { bucketQuantile, bucketsSum, bucketsTotal } from '../lib/prom-histogram';
import { maxOf } from '../lib/util';
import { finite } from './s7-measures';
import { Point, Policy, RunInfo } from './s7-types';

/** One figure of the scenario from its per-round values; `ok` gives the verdict (null: none). */
export type Row = (
  name: string,
  xs: number[],
  target: string,
  unit: string,
  ok: boolean | null,
) => Figure;

/** Figures of the runs, round by round (each round's loads are multiples of its own probe). */
export class Rounds {
  constructor(
    readonly points: Point[],
    readonly run: RunInfo,
  ) {}

  pick(load: number, policy: Policy, round: number): Point | undefined {
    return this.points.find((p) => p.load === load && p.policy === policy && p.round === round);
  }

  /** One value per round, those that could be computed. */
  each(f: (round: number) => number | null | undefined): number[] {
    return finite(Array.from({ length: this.run.rounds }, (_, r) => f(r) ?? null));
  }

  /** The best goodput within the objective that any policy reached at any load in a round. */
  best(round: number): number {
    return maxOf(this.points.filter((p) => p.round === round).map((p) => p.goodput_slo_rps)) ?? NaN;
  }

  goodputOfBest = (policy: Policy): number[] =>
    this.each((r) => (this.pick(4, policy, r)?.goodput_slo_rps ?? NaN) / this.best(r));
  metShare = (policy: Policy): number[] =>
    this.each((r) => 100 * (this.pick(4, policy, r)?.admitted_met_share ?? NaN));
  ofCapacity = (policy: Policy): number[] =>
    this.each((r) => (this.pick(4, policy, r)?.goodput_rps ?? NaN) / this.run.capacities[r]);
  ttftGrowth = (policy: Policy): number[] =>
    this.each(
      (r) =>
        (this.pick(4, policy, r)?.ttft_p99_ms ?? NaN) /
        (this.pick(0.5, policy, r)?.ttft_p99_ms ?? NaN),
    );

  /** |predicted − actual| of the objective policy's admitted requests, every load of a round. */
  predictionError(q: number): number[] {
    return this.each((r) => {
      const b = bucketsSum(
        this.points
          .filter((p) => p.policy === 'slo' && p.round === r)
          .map((p) => p.prediction_error),
      );
      const v = bucketQuantile(b, q).value;
      return v === null ? null : 1000 * v;
    });
  }

  predictionCount(): number {
    return bucketsTotal(
      bucketsSum(this.points.filter((p) => p.policy === 'slo').map((p) => p.prediction_error)),
    );
  }
}
