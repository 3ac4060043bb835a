import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answeringHttp } from './engine-http.fixture';
import { LlamacppAdapter, mapLlamacpp } from './llamacpp.adapter';
import { UnparsableError } from '../unparsable.error';

const FIXTURES = join(__dirname, '../../../../test/fixtures/engines/llamacpp');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const json = (name: string): unknown => JSON.parse(fixture(name));

/** What a real 0.7.0 server answered, path by path, with `/slots` as recorded in `slots`. */
const recorded = (slots: string, metrics = '0.7.0/metrics-busy.txt', props = '0.7.0/props.json') =>
  answeringHttp({
    '/props': fixture(props),
    '/slots': fixture(slots),
    '/metrics': fixture(metrics),
  });

describe('LlamacppAdapter on recorded 0.7.0 answers', () => {
  it('maps each slot to a block of its window and the deferred requests to waiting', async () => {
    const asked: string[] = [];
    const http = answeringHttp(
      {
        '/props': fixture('0.7.0/props.json'),
        '/slots': fixture('0.7.0/slots-busy.json'),
        '/metrics': fixture('0.7.0/metrics-busy.txt'),
      },
      asked,
    );
    expect(await new LlamacppAdapter().scrape(http)).toEqual({
      model: 'tiny',
      ranks: [
        { kvTotalBlocks: 4, activeDecodeBlocks: 4, kvBlockSize: 2048, numRequestsWaiting: 2 },
      ],
    });
    // The alias is in /props: /v1/models is not asked.
    expect(asked).not.toContain('/v1/models');
  });

  it.each([
    ['just started', '0.7.0/slots-idle.json'],
    ['idle again, each slot keeping its last prompt cached', '0.7.0/slots-after.json'],
  ])('reads an idle server (%s) as no slot in use', async (_state, slots) => {
    const snapshot = await new LlamacppAdapter().scrape(recorded(slots));
    expect(snapshot.ranks[0]).toMatchObject({ kvTotalBlocks: 4, activeDecodeBlocks: 0 });
  });

  it('counts a unified cache in tokens: what the processing slots hold of the whole cache', async () => {
    const http = recorded(
      '0.7.0/slots-unified-busy.json',
      '0.7.0/metrics-unified-busy.txt',
      '0.7.0/props-unified.json',
    );
    const snapshot = await new LlamacppAdapter('unified').scrape(http);
    // 2404 + 1188 tokens of 4096: more than the 2 of 4 slots in use.
    expect(snapshot.ranks).toEqual([
      { kvTotalBlocks: 4096, activeDecodeBlocks: 3592, kvBlockSize: 1, numRequestsWaiting: 0 },
    ]);
    // Read as per-slot windows, the same answer is 2 slots of 4.
    const perSlot = await new LlamacppAdapter('per-slot').scrape(http);
    expect(perSlot.ranks[0]).toMatchObject({ kvTotalBlocks: 4, activeDecodeBlocks: 2 });
  });

  it('counts a unified cache by its slots when they are fuller than the cache', () => {
    const sut = mapLlamacpp(
      {
        props: json('0.7.0/props.json'),
        slots: json('0.7.0/slots-busy.json'),
        metrics: fixture('0.7.0/metrics-busy.txt'),
      },
      'unified',
    );
    // 4 of 4 slots hold 529 tokens of 2048: the slots are what is full.
    expect(sut.ranks[0]).toMatchObject({ kvTotalBlocks: 2048, activeDecodeBlocks: 2048 });
  });

  it('works without /slots (--no-slots) from total_slots and requests_processing', () => {
    const sut = mapLlamacpp({
      props: json('0.7.0/props.json'),
      slots: undefined,
      metrics: fixture('0.7.0/metrics-busy.txt'),
    });
    expect(sut.ranks).toEqual([
      { kvTotalBlocks: 4, activeDecodeBlocks: 4, kvBlockSize: 2048, numRequestsWaiting: 2 },
    ]);
  });

  it('refuses a server with neither /slots nor /metrics, saying what to enable', () => {
    expect(() =>
      mapLlamacpp({ props: json('0.7.0/props.json'), slots: undefined, metrics: undefined }),
    ).toThrow(/--metrics/);
  });
});

describe('LlamacppAdapter on older servers (written from their source)', () => {
  it('reads the slot state of servers before b4027 (`state`, no is_processing)', async () => {
    const http = answeringHttp({
      '/props': fixture('2024-07/props.json'),
      '/slots': fixture('2024-07/slots.json'),
      '/metrics': fixture('2024-07/metrics.txt'),
      '/v1/models': fixture('2024-07/models.json'),
    });
    const snapshot = await new LlamacppAdapter().scrape(http);
    expect(snapshot).toEqual({
      model: 'models/llama-3-8b-instruct.Q4_K_M.gguf',
      ranks: [
        { kvTotalBlocks: 4, activeDecodeBlocks: 2, kvBlockSize: 2048, numRequestsWaiting: 0 },
      ],
    });
  });

  it('reads a server with /slots off (its default from October 2024 to August 2025)', async () => {
    const asked: string[] = [];
    const http = answeringHttp(
      {
        '/props': fixture('2025-04/props.json'),
        '/metrics': fixture('2025-04/metrics.txt'),
        '/v1/models': fixture('2025-04/models.json'),
      },
      asked,
    );
    const snapshot = await new LlamacppAdapter().scrape(http);
    // kv_cache_usage_ratio (0.91, idle slots' cached prompts included) is not read.
    expect(snapshot).toEqual({
      model: 'qwen2.5-7b-instruct',
      ranks: [
        { kvTotalBlocks: 4, activeDecodeBlocks: 3, kvBlockSize: 4096, numRequestsWaiting: 6 },
      ],
    });
    expect(asked).toContain('/v1/models');
  });

  it('falls back to slot counts for a unified cache when the slots carry no token counts', () => {
    const sut = mapLlamacpp(
      {
        props: json('2024-07/props.json'),
        slots: json('2024-07/slots.json'),
        metrics: fixture('2024-07/metrics.txt'),
      },
      'unified',
    );
    expect(sut.ranks[0]).toMatchObject({ kvTotalBlocks: 4, activeDecodeBlocks: 2 });
  });
});

describe('mapLlamacpp refuses answers it cannot trust', () => {
  const props = json('0.7.0/props.json');
  it.each([
    ['slots not a list', { slots: { a: 1 }, metrics: undefined }],
    ['a slot with neither is_processing nor state', { slots: [{ id: 0 }], metrics: undefined }],
    ['a negative slot token count', { slots: [{ is_processing: true, n_prompt_tokens: -3 }] }],
    ['negative deferred', { slots: [], metrics: 'llamacpp:requests_deferred -2\n' }],
    ['NaN deferred', { slots: [], metrics: 'llamacpp:requests_deferred NaN\n' }],
    ['no requests_processing without /slots', { slots: undefined, metrics: '# nothing\n' }],
  ])('%s', (_name, answers) => {
    expect(() => mapLlamacpp({ props, metrics: undefined, ...answers })).toThrow(UnparsableError);
  });
});
