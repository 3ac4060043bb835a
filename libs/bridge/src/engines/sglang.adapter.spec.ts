import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answeringHttp } from './engine-http.fixture';
import { mapSglangLoads, mapSglangMetrics, SglangAdapter, sglangInfo } from './sglang.adapter';
import { UnparsableError } from '../unparsable.error';

const FIXTURES = join(__dirname, '../../../../test/fixtures/engines/sglang');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');

const http = answeringHttp;

describe('SglangAdapter', () => {
  it('maps /v1/loads ranks (sorted by dp_rank) with /server_info page size and model', async () => {
    const sut = new SglangAdapter();
    const asked: string[] = [];
    const snapshot = await sut.scrape(
      http(
        { '/v1/loads': fixture('v1-loads-dp2.json'), '/server_info': fixture('server-info.json') },
        asked,
      ),
    );
    expect(asked).not.toContain('/metrics');
    expect(snapshot).toEqual({
      model: 'Qwen/Qwen3-8B',
      ranks: [
        // 163840 / 16 pages; 131073 used tokens fill 8193 pages (a partly filled page counts)
        {
          kvTotalBlocks: 10240,
          activeDecodeBlocks: 8193,
          numRequestsWaiting: 5,
          activePrefillTokens: 7300,
        },
        {
          kvTotalBlocks: 10240,
          activeDecodeBlocks: 256,
          numRequestsWaiting: 0,
          activePrefillTokens: 0,
        },
      ],
    });
  });

  it('reads the newest /v1/loads (published load snapshots, no aggregate)', async () => {
    const answers = {
      '/v1/loads': fixture('v1-loads-snapshot.json'),
      '/server_info': fixture('server-info.json'),
    };
    expect(await new SglangAdapter().scrape(http(answers))).toEqual({
      model: 'Qwen/Qwen3-8B',
      ranks: [
        {
          kvTotalBlocks: 10240,
          activeDecodeBlocks: 3258,
          numRequestsWaiting: 2,
          activePrefillTokens: undefined,
        },
      ],
    });
  });

  it('asks /get_server_info when the server predates /server_info', async () => {
    const asked: string[] = [];
    const answers = {
      '/v1/loads': fixture('v1-loads-dp2.json'),
      '/get_server_info': fixture('server-info.json'),
    };
    const snapshot = await new SglangAdapter().scrape(http(answers, asked));
    expect(asked).toContain('/get_server_info');
    expect(snapshot.ranks[0].kvTotalBlocks).toBe(10240);
  });

  it('falls back to /metrics when /v1/loads is absent (404), shard 0 only, saying its age is unknown', async () => {
    const sut = new SglangAdapter();
    const snapshot = await sut.scrape(http({ '/metrics': fixture('metrics.txt') }));
    expect(snapshot).toEqual({
      model: 'Qwen/Qwen3-8B',
      ranks: [
        {
          kvTotalBlocks: 160000,
          activeDecodeBlocks: 40000,
          numRequestsWaiting: 3,
          activePrefillTokens: undefined,
        },
      ],
      gaps: [{ gap: 'freshness', reason: expect.stringMatching(/30 s/) }],
    });
  });

  it('reads one rank per dp_rank from /metrics: the gauges of its last write, however old', () => {
    const sut = mapSglangMetrics(fixture('metrics-dp2.txt'), sglangInfo(undefined));
    expect(sut.ranks).toEqual([
      {
        kvTotalBlocks: 163840,
        activeDecodeBlocks: 21504,
        numRequestsWaiting: 2,
        activePrefillTokens: undefined,
      },
      {
        kvTotalBlocks: 163840,
        activeDecodeBlocks: 0,
        numRequestsWaiting: 0,
        activePrefillTokens: undefined,
      },
    ]);
    expect(sut.gaps?.map((g) => g.gap)).toEqual(['freshness']);
  });

  it('takes the capacity from /server_info when /metrics lacks sglang:max_total_num_tokens', () => {
    const body =
      'sglang:num_used_tokens{model_name="m"} 30\nsglang:num_queue_reqs{model_name="m"} 1\n';
    const info = sglangInfo({ page_size: 4, max_total_num_tokens: 100, served_model_name: 'x' });
    expect(mapSglangMetrics(body, info).ranks).toEqual([
      {
        kvTotalBlocks: 25,
        activeDecodeBlocks: 8,
        numRequestsWaiting: 1,
        activePrefillTokens: undefined,
      },
    ]);
  });

  it('defaults to page size 1 and no model without /server_info', () => {
    const loads = { loads: [{ dp_rank: 0, num_used_tokens: 5, max_total_num_tokens: 10 }] };
    expect(mapSglangLoads(loads, sglangInfo(undefined))).toEqual({
      model: undefined,
      ranks: [
        {
          kvTotalBlocks: 10,
          activeDecodeBlocks: 5,
          numRequestsWaiting: undefined,
          activePrefillTokens: undefined,
        },
      ],
    });
  });

  it.each([
    ['no loads list', { loads: 'x' }],
    ['empty loads', { loads: [] }],
    ['negative used tokens', { loads: [{ num_used_tokens: -1, max_total_num_tokens: 10 }] }],
    ['missing capacity', { loads: [{ num_used_tokens: 1 }] }],
    [
      'fractional waiting',
      { loads: [{ num_used_tokens: 1, max_total_num_tokens: 10, num_waiting_reqs: 0.5 }] },
    ],
  ])('refuses /v1/loads with %s', (_name, body) => {
    expect(() => mapSglangLoads(body, sglangInfo(undefined))).toThrow(UnparsableError);
  });

  it('refuses /metrics without a capacity anywhere', () => {
    expect(() => mapSglangMetrics('sglang:num_used_tokens 1\n', sglangInfo(undefined))).toThrow(
      UnparsableError,
    );
  });
});
