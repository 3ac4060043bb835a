import { Counter, Registry } from 'prom-client';
import { flushPendingCounts, PendingCounts } from './pending-counts';

const LABELS = ['model', 'endpoint', 'priority'] as const;
type Label = (typeof LABELS)[number];

describe('PendingCounts', () => {
  let registry: Registry;
  let counter: Counter<Label>;

  beforeEach(() => {
    registry = new Registry();
    counter = new Counter({
      name: 'test_rejections_total',
      help: 'test',
      labelNames: LABELS,
      registers: [registry],
      collect: flushPendingCounts,
    });
  });

  const values = async (): Promise<Array<[string, number]>> =>
    (await counter.get()).values
      .map((v): [string, number] => [LABELS.map((l) => v.labels[l]).join('/'), v.value])
      .sort();

  it('counts each label set apart and hands every count to a read of the counter', async () => {
    const counts = new PendingCounts(counter, LABELS);
    counts.inc(['m', 'chat', 'critical']);
    counts.inc(['m', 'chat', 'critical']);
    counts.inc(['m', 'chat', 'sheddable']);
    counts.inc(['n', 'completions', 'critical']);
    expect(await values()).toEqual([
      ['m/chat/critical', 2],
      ['m/chat/sheddable', 1],
      ['n/completions/critical', 1],
    ]);
    counts.inc(['m', 'chat', 'critical']);
    expect(await values()).toContainEqual(['m/chat/critical', 3]);
  });

  it('is read by a scrape of the registry as well as by get()', async () => {
    const counts = new PendingCounts(counter, LABELS);
    counts.inc(['m', 'chat', 'standard']);
    expect(await registry.metrics()).toContain(
      'test_rejections_total{model="m",endpoint="chat",priority="standard"} 1',
    );
  });

  it('counts from several owners into one counter (apps in one process share it)', async () => {
    const a = new PendingCounts(counter, LABELS);
    const b = new PendingCounts(counter, LABELS);
    a.inc(['m', 'chat', 'standard']);
    b.inc(['m', 'chat', 'standard']);
    expect(await values()).toEqual([['m/chat/standard', 2]]);
  });

  it("forget removes the series of a first label value, flushed or pending, and no other's", async () => {
    const counts = new PendingCounts(counter, LABELS);
    counts.inc(['m', 'chat', 'standard']);
    counts.inc(['n', 'chat', 'standard']);
    await values();
    counts.inc(['m', 'completions', 'critical']);
    counts.forget('m');
    expect(await values()).toEqual([['n/chat/standard', 1]]);
    counts.inc(['m', 'chat', 'standard']);
    expect(await values()).toEqual([
      ['m/chat/standard', 1],
      ['n/chat/standard', 1],
    ]);
  });

  it('close flushes what is pending and stops answering reads', async () => {
    const counts = new PendingCounts(counter, LABELS);
    counts.inc(['m', 'chat', 'standard']);
    counts.close();
    counts.inc(['m', 'chat', 'standard']);
    expect(await values()).toEqual([['m/chat/standard', 1]]);
  });
});
