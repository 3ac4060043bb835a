import { HISTORY_BUCKET_MS, TrafficHistory } from '../request-metrics/traffic-history';
import { HistoryService } from './history.service';
import { STATUS_LIMITS } from './status.service';

describe('HistoryService', () => {
  let now: number;
  let history: TrafficHistory;
  let sut: HistoryService;

  beforeEach(() => {
    now = 1000 * HISTORY_BUCKET_MS;
    history = new TrafficHistory(() => now);
    sut = new HistoryService(history);
  });

  it('lists each model with a history by name, its rates and shares rounded', () => {
    history.sample('b', 1, 0.5);
    history.sample('a', 1 / 3, 2 / 3);
    for (let i = 0; i < 7; i++) history.admitted('a');
    history.rejected('a', 'critical');
    history.sample('a', 0, 0);
    history.rejected('a', 'sheddable');
    now += HISTORY_BUCKET_MS; // the bucket is complete
    const s = sut.snapshot(now);
    expect(s).toMatchObject({
      generated_at_ms: now,
      bucket_seconds: 5,
      window_seconds: 600,
      models_omitted: 0,
    });
    expect(s.models.map((m) => m.model)).toEqual(['a', 'b']);
    expect(s.models[0]).toEqual({
      model: 'a',
      t_ms: [now],
      admitted_per_second: [1.4],
      rejected_per_second: { critical: [0.2], standard: [0], sheddable: [0.2] },
      busy_worker_share: [0.1667],
      kv_usage: [0.3333],
    });
  });

  it('lists at most as many models as the status snapshot, and says how many it left out', () => {
    for (let i = 0; i < STATUS_LIMITS.maxModels + 3; i++) {
      history.sample(`m${String(i).padStart(3, '0')}`, 0, null);
    }
    const s = sut.snapshot(now);
    expect(s.models).toHaveLength(STATUS_LIMITS.maxModels);
    expect(s.models_omitted).toBe(3);
    expect(s.models[0].model).toBe('m000');
  });
});
