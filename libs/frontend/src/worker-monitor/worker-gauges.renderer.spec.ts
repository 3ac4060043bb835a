import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { KvMetricsReport } from '@sluice/contracts';
import { parsedReport } from '@sluice/testkit';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Gauge, Registry } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { WorkerRegistry } from './worker-registry.service';
import { ThresholdsService } from '../thresholds/thresholds.service';
import {
  BUSY_GAUGE,
  EJECTED_GAUGE,
  RANK_GAUGES,
  WorkerGaugesRenderer,
} from './worker-gauges.renderer';

const M = 'Qwen/Qwen3-0.6B';

const report = (workerId: string, over: Partial<KvMetricsReport> = {}): KvMetricsReport =>
  parsedReport(workerId, { model: M, activeDecodeBlocks: 10, activePrefillTokens: 5, ...over });

/** What prom-client wrote for the same state when these were gauges reset and set per scrape. */
async function promClientText(registry: WorkerRegistry): Promise<string> {
  const reg = new Registry();
  const labelNames = ['model', 'worker_id', 'dp_rank'];
  for (const { name, help, field } of RANK_GAUGES) {
    const gauge = new Gauge({ name, help, labelNames, registers: [reg] });
    for (const { model, id, ranks } of registry.liveWorkers()) {
      for (const [rank, state] of ranks) {
        const value = state[field];
        if (value !== undefined) gauge.set({ model, worker_id: id, dp_rank: String(rank) }, value);
      }
    }
  }
  const busy = new Gauge({ ...BUSY_GAUGE, labelNames: ['model', 'worker_id'], registers: [reg] });
  for (const w of registry.liveWorkers()) busy.set({ model: w.model, worker_id: w.id }, +w.busy);
  const ejected = new Gauge({
    ...EJECTED_GAUGE,
    labelNames: ['model', 'worker_id'],
    registers: [reg],
  });
  for (const w of registry.liveWorkers()) {
    ejected.set({ model: w.model, worker_id: w.id }, +!w.inRouting);
  }
  return reg.metrics();
}

describe('WorkerGaugesRenderer', () => {
  let registry: WorkerRegistry;
  let sut: WorkerGaugesRenderer;

  const render = async (): Promise<string> => Buffer.concat(await sut.render()).toString();

  /** The exposition lines of metrics starting with `prefix`, as a scrape would see them. */
  async function scrape(prefix = 'dynamo_frontend_worker_'): Promise<string[]> {
    return (await render()).split('\n').filter((l) => l.startsWith(prefix));
  }

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  beforeEach(async () => {
    const thresholds = { activeDecodeBlocks: 0.9, activePrefillTokens: null };
    const config = new FrontendConfig({
      thresholds: { ...thresholds, activePrefillTokensFrac: null },
    });
    const module = await Test.createTestingModule({
      providers: [
        { provide: FrontendConfig, useValue: config },
        ThresholdsService,
        WorkerRegistry,
        WorkerGaugesRenderer,
      ],
    }).compile();
    registry = module.get(WorkerRegistry);
    sut = module.get(WorkerGaugesRenderer);
  });

  it('shows each reported rank and the busy state of each worker', async () => {
    registry.applyReport(report('w1', { dpSize: 2, dpRank: 1, activeDecodeBlocks: 95 }), 0);
    registry.applyReport(report('w2', { activeDecodeBlocks: 91, activePrefillTokens: 7 }), 0);
    expect(await scrape()).toEqual([
      `dynamo_frontend_worker_active_decode_blocks{model="${M}",worker_id="w1",dp_rank="1"} 95`,
      `dynamo_frontend_worker_active_decode_blocks{model="${M}",worker_id="w2",dp_rank="0"} 91`,
      `dynamo_frontend_worker_kv_total_blocks{model="${M}",worker_id="w1",dp_rank="1"} 100`,
      `dynamo_frontend_worker_kv_total_blocks{model="${M}",worker_id="w2",dp_rank="0"} 100`,
      `dynamo_frontend_worker_active_prefill_tokens{model="${M}",worker_id="w1",dp_rank="1"} 5`,
      `dynamo_frontend_worker_active_prefill_tokens{model="${M}",worker_id="w2",dp_rank="0"} 7`,
      `dynamo_frontend_worker_busy{model="${M}",worker_id="w1"} 0`,
      `dynamo_frontend_worker_busy{model="${M}",worker_id="w2"} 1`,
    ]);
  });

  it('shows the latest report of a rank', async () => {
    registry.applyReport(report('w1', { activeDecodeBlocks: 95 }), 0);
    await scrape();
    registry.applyReport(report('w1', { activeDecodeBlocks: 20 }), 0);
    const lines = await scrape();
    expect(lines).toContain(
      `dynamo_frontend_worker_active_decode_blocks{model="${M}",worker_id="w1",dp_rank="0"} 20`,
    );
    expect(lines).toContain(`dynamo_frontend_worker_busy{model="${M}",worker_id="w1"} 0`);
  });

  it("drops a forgotten worker's series and keeps the others", async () => {
    registry.applyReport(report('w1'), 0);
    registry.applyReport(report('w2'), 0);
    expect(await scrape()).toHaveLength(8);
    registry.removeWorker('w1', 'worker_down');
    const lines = await scrape();
    expect(lines).toHaveLength(4);
    expect(lines.filter((l) => l.includes('worker_id="w1"'))).toEqual([]);
  });

  it('shows the requests waiting of each rank that reports them, and no series for one that does not', async () => {
    registry.applyReport(report('w1', { dpSize: 2, dpRank: 0, numRequestsWaiting: 3 }), 0);
    registry.applyReport(report('w1', { dpSize: 2, dpRank: 1, numRequestsWaiting: 0 }), 0);
    registry.applyReport(report('w2'), 0);
    expect(await scrape('sluice_frontend_worker_requests_waiting')).toEqual([
      `sluice_frontend_worker_requests_waiting{model="${M}",worker_id="w1",dp_rank="0"} 3`,
      `sluice_frontend_worker_requests_waiting{model="${M}",worker_id="w1",dp_rank="1"} 0`,
    ]);
    registry.applyReport(report('w1', { dpSize: 2, dpRank: 0 }), 0);
    expect(await scrape('sluice_frontend_worker_requests_waiting')).toEqual([
      `sluice_frontend_worker_requests_waiting{model="${M}",worker_id="w1",dp_rank="1"} 0`,
    ]);
  });

  it('writes the text prom-client wrote for the same state', async () => {
    for (let w = 0; w < 30; w++) {
      const dpSize = 1 + (w % 4);
      for (let rank = 0; rank < dpSize; rank += w % 3 === 0 ? 2 : 1) {
        registry.applyReport(
          report(`w${w}`, {
            model: `model-${w % 3}`,
            dpSize,
            dpRank: rank,
            activeDecodeBlocks: (w * 7 + rank) % 100,
            activePrefillTokens: w % 5 === 0 ? undefined : w * 3,
            numRequestsWaiting: w % 2 === 0 ? rank : undefined,
          }),
          0,
        );
      }
    }
    // A rank with no reported prefill shows the frontend's own count, split over dp_size.
    registry.addPendingPrefill(registry.model('model-0')!.workers.get('w0')!, 1);
    const text = await render();
    expect(text).toEqual(await promClientText(registry));
    const families = parsePrometheusTextFormat(text);
    expect(families.map((f) => [f.name, f.type])).toEqual(
      [...RANK_GAUGES, BUSY_GAUGE, EJECTED_GAUGE].map((g) => [g.name, 'GAUGE']),
    );
    expect(families.at(-1)?.metrics).toHaveLength(30);
  });

  it('escapes label values', async () => {
    const odd = 'a"b\\c\nd';
    registry.applyReport(report(odd, { model: `m${odd}` }), 0);
    const text = await render();
    expect(text).toEqual(await promClientText(registry));
    const busy = parsePrometheusTextFormat(text).find((f) => f.name === BUSY_GAUGE.name);
    expect(busy?.metrics.map((m) => m.labels)).toEqual([{ model: `m${odd}`, worker_id: odd }]);
  });

  it('writes an empty family with its HELP and TYPE lines when no worker is tracked', async () => {
    expect(await render()).toEqual(await promClientText(registry));
  });

  it('yields between slices, and writes the workers live at their slice, not those that joined later', async () => {
    for (let w = 0; w < 100; w++) {
      for (let rank = 0; rank < 8; rank++) {
        registry.applyReport(report(`w${w}`, { dpSize: 8, dpRank: rank }), 0);
      }
    }
    // A clock that jumps a second per read: every batch (29 workers of 8 ranks) ends its slice.
    let clock = 0;
    let reads = 0;
    jest.spyOn(performance, 'now').mockImplementation(() => {
      // As the first slice ends (the second read): one worker goes, one joins.
      if (++reads === 2) {
        registry.removeWorker('w90', 'worker_down');
        registry.applyReport(report('late'), 0);
      }
      return (clock += 1000);
    });
    let turns = 0;
    let rendering = true;
    const count = (): void => {
      turns++;
      if (rendering) setImmediate(count);
    };
    setImmediate(count);
    const text = await render();
    rendering = false;
    // A turn before the first slice and one after each of the three full batches.
    expect(turns).toBeGreaterThanOrEqual(4);
    const busy = text.split('\n').filter((l) => l.startsWith(BUSY_GAUGE.name));
    expect(busy).toHaveLength(99);
    expect(busy.filter((l) => /worker_id="(w90|late)"/.test(l))).toEqual([]);
  });
});
