import { pool, Slice } from './real-engine-load';
import { Policy } from './real-engine-policies';
import { figures, Point, Run } from './real-engine-report';

const slice = (over: Partial<Slice>): Slice => ({
  arrivals: 10,
  admitted: 10,
  refused: 0,
  failed: 0,
  met: 10,
  windowS: 10,
  ttfts: [],
  busy: [],
  deferredMax: 0,
  ...over,
});

describe('pool', () => {
  it('adds the slices up: goodput over their windows together, percentiles over every sample', () => {
    const r = pool([
      slice({ arrivals: 20, admitted: 15, refused: 5, met: 12, windowS: 10, ttfts: [10, 20] }),
      slice({ arrivals: 30, admitted: 20, refused: 10, met: 18, windowS: 20, ttfts: [30, 400] }),
    ]);
    expect(r).toMatchObject({ arrivals: 50, admitted: 35, refused: 15, goodput: 1 });
    expect(r.ttftP50).toBe(20);
    expect(r.ttftP99).toBe(400);
  });

  it('takes the mean of every busy sample and the most deferred of any slice', () => {
    const r = pool([
      slice({ busy: [4, 4, 4], deferredMax: 2 }),
      slice({ busy: [0], deferredMax: 7 }),
    ]);
    expect(r.slotsBusy).toBe(3);
    expect(r.deferredMax).toBe(7);
  });
});

describe('figures', () => {
  const run: Run = {
    shape: { model: 'micro', promptWords: 16, maxTokens: 96 },
    capacity: 10,
    alone: { ttftMs: 20, totalMs: 120 },
    objectiveMs: 90,
    loads: [1],
    rounds: 2,
    passes: 3,
    durationS: 14,
    warmupS: 2,
    drainS: 5,
  };
  const point = (policy: Policy, round: number, goodput: number): Point => ({
    ...{ arrivals: 100, admitted: 50, refused: 50, failed: 0 },
    ...{ ttftP50: 10, ttftP99: 50, slotsBusy: 3, deferredMax: 0 },
    goodput,
    policy,
    load: 1,
    round,
  });
  const rounds = (name: string, points: Point[]) =>
    figures(points, run).find((f) => f.name.startsWith(name))?.rounds;

  it("divides by the best over all rounds, in each round by that policy's value", () => {
    // static has the most over both rounds (18 against 17.5), though objective beat it in round 0.
    const points = [
      ...[point('off', 0, 0), point('static', 0, 8), point('objective', 0, 9)],
      ...[point('off', 1, 0), point('static', 1, 10), point('objective', 1, 8.5)],
      ...[point('static again', 0, 8), point('static again', 1, 10)],
    ];
    expect(rounds('llama.cpp, TTFT objective', points)).toEqual([9 / 8, 8.5 / 10]);
    expect(rounds('llama.cpp, static again', points)).toEqual([1, 1]);
    expect(rounds('llama.cpp, static:', points)).toEqual([1, 1]);
  });
});
