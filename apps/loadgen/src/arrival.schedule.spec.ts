import {
  arrivalCount,
  arrivalOffsetMs,
  runArrivalSchedule,
  ScheduleClock,
} from './arrival.schedule';

/** A virtual clock whose timers fire `lateMs` late, plus one long stall at `stallAtMs`. */
function lateClock(lateMs: number, stall?: { atMs: number; forMs: number }): ScheduleClock {
  let now = 1_000; // t0 need not be 0
  let stalled = false;
  return {
    now: () => now,
    sleep: (ms) => {
      now += Math.max(0, Math.ceil(ms)) + lateMs;
      if (stall && !stalled && now >= stall.atMs) {
        stalled = true;
        now += stall.forMs;
      }
      return Promise.resolve();
    },
  };
}

interface Fired {
  index: number;
  at: number;
  lagMs: number;
}

async function run(rate: number, durationS: number, clock: ScheduleClock): Promise<Fired[]> {
  const fired: Fired[] = [];
  const t0 = clock.now();
  await runArrivalSchedule({
    rate,
    durationS,
    t0,
    clock,
    onArrival: (index, lagMs) => fired.push({ index, at: clock.now() - t0, lagMs }),
  });
  return fired;
}

describe('arrival schedule', () => {
  it('counts the arrivals i with i / rate < duration', () => {
    expect(arrivalCount(20, 30)).toBe(600);
    expect(arrivalCount(0.3, 10)).toBe(3);
    expect(arrivalCount(3, 1)).toBe(3);
    expect(arrivalCount(2.5, 1)).toBe(3); // 0, 400, 800 ms
  });

  it('places arrival i exactly at i / rate, without accumulated rounding', () => {
    expect(arrivalOffsetMs(3, 3)).toBe(1000);
    expect(arrivalOffsetMs(700_000, 7)).toBe(100_000_000);
    let summed = 0;
    for (let i = 0; i < 700_000; i++) summed += 1000 / 7;
    expect(summed).not.toBe(100_000_000); // what a per-request interval would drift to
  });

  it('keeps the rate and ends on time when every timer fires late', async () => {
    const sut = await run(100, 10, lateClock(3));

    expect(sut.map((f) => f.index)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    for (const f of sut) {
      expect(f.at).toBeGreaterThanOrEqual(arrivalOffsetMs(f.index, 100));
      expect(f.at - arrivalOffsetMs(f.index, 100)).toBeLessThanOrEqual(4);
    }
    // Rescheduling from "now" would end 1000 × 3 ms = 3 s late.
    expect(sut[999].at).toBeLessThan(9990 + 4);
  });

  it('catches up at once after a stall instead of shifting later arrivals', async () => {
    const sut = await run(50, 4, lateClock(0, { atMs: 2000, forMs: 500 }));

    expect(sut).toHaveLength(200);
    const burst = sut.filter((f) => f.lagMs > 0);
    expect(burst.length).toBeGreaterThanOrEqual(24); // ~500 ms worth of arrivals at 50/s
    expect(new Set(burst.map((f) => f.at)).size).toBe(1); // all fired in the same wake-up
    const after = sut.filter((f) => f.at > burst[0].at);
    for (const f of after) expect(f.at).toBe(arrivalOffsetMs(f.index, 50));
  });

  it('stops early when its signal aborts', async () => {
    const stop = new AbortController();
    const fired: number[] = [];
    const clock = lateClock(0);
    const sut = await runArrivalSchedule({
      rate: 10,
      durationS: 10,
      t0: clock.now(),
      clock,
      signal: stop.signal,
      onArrival: (i) => {
        fired.push(i);
        if (i === 4) stop.abort();
      },
    });
    expect(sut).toBe(5);
    expect(fired).toEqual([0, 1, 2, 3, 4]);
  });
});
