import { Point, SampleKind, SamplePoint } from './s7-types';

export const finite = (xs: Array<number | null>): number[] =>
  xs.filter((x): x is number => x !== null && Number.isFinite(x));

/** Share of the frontend's refusals made by the objective (both counters over the same interval). */
export const byObjective = (p: Point | SamplePoint): number | null =>
  p.rejections > 0 ? p.slo_rejections / p.rejections : null;

/** The sample points of one kind. */
export const ofKind = (samples: SamplePoint[], kind: SampleKind): SamplePoint[] =>
  samples.filter((s) => s.kind === kind);

/** Wrong refusals: sampled would-be refusals that met the objective, pooled over the rounds. */
export function wrongRefusals(samples: SamplePoint[]): {
  share: number | null;
  perRound: number[];
  met: number;
  judged: number;
  failed: number;
} {
  const met = samples.reduce((a, s) => a + s.sample.met, 0);
  const judged = samples.reduce((a, s) => a + s.sample.met + s.sample.missed, 0);
  const failed = samples.reduce((a, s) => a + s.sample.failed, 0);
  const perRound = finite(
    samples.map((s) => {
      const n = s.sample.met + s.sample.missed;
      return n ? (100 * s.sample.met) / n : null;
    }),
  );
  return { share: judged ? (100 * met) / judged : null, perRound, met, judged, failed };
}
