import { Counter, Registry } from 'prom-client';
import { RejectionRateService } from './rejection-rate.service';

describe('RejectionRateService', () => {
  let counter: Counter;
  let sut: RejectionRateService;

  beforeEach(() => {
    counter = new Counter({
      name: 'rejections_test_total',
      help: 'test',
      labelNames: ['model', 'endpoint'],
      registers: [new Registry()],
    });
    sut = new RejectionRateService(counter);
  });

  it('is 0 before two samples exist', async () => {
    counter.inc({ model: 'm', endpoint: 'completions' }, 5);
    await sut.sample(0);
    expect(sut.perSecond('m')).toBe(0);
    expect(sut.total('m')).toBe(5);
  });

  it('sums endpoints per model and divides by the time between samples', async () => {
    await sut.sample(0);
    counter.inc({ model: 'm', endpoint: 'chat_completions' }, 3);
    counter.inc({ model: 'm', endpoint: 'completions' }, 1);
    counter.inc({ model: 'other', endpoint: 'completions' }, 10);
    await sut.sample(2000);
    expect(sut.perSecond('m')).toBe(2);
    expect(sut.perSecond('other')).toBe(5);
    expect(sut.perSecond('never-seen')).toBe(0);
    expect(sut.total('m')).toBe(4);
  });

  it('forgets rejections older than the window, so the rate falls back to 0', async () => {
    await sut.sample(0);
    counter.inc({ model: 'm', endpoint: 'completions' }, 6);
    await sut.sample(1000);
    expect(sut.perSecond('m')).toBe(6);
    for (let s = 2; s <= 6; s++) await sut.sample(s * 1000);
    // The ring holds 1 s .. 6 s now: all six rejections happened before its first sample.
    expect(sut.perSecond('m')).toBe(0);
    expect(sut.total('m')).toBe(6);
  });

  it('skips a sample left far behind by a stalled event loop', async () => {
    await sut.sample(0);
    await sut.sample(1000);
    counter.inc({ model: 'm', endpoint: 'completions' }, 2);
    await sut.sample(9000);
    // 0 s and 1 s are outside the 5 s window: the rate is over the last step alone.
    expect(sut.perSecond('m')).toBe(0.25);
    counter.inc({ model: 'm', endpoint: 'completions' }, 4);
    await sut.sample(10000);
    expect(sut.perSecond('m')).toBe(4);
  });
});
