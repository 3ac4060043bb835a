import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mapVllmMetrics, VLLM_FILTERED_PATH, VllmAdapter } from './vllm.adapter';
import { answeringHttp } from './engine-http.fixture';
import { UnparsableError } from '../unparsable.error';

const FIXTURES = join(__dirname, '../../../../test/fixtures/engines/vllm');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');

/** What prometheus_client's own exporter answers to the name filter: only those samples. */
const filtered = (body: string): string =>
  body
    .split('\n')
    .filter((l) => /^vllm:(kv_cache_usage_perc|cache_config_info|num_requests_waiting)\b/.test(l))
    .join('\n');

describe('VllmAdapter', () => {
  const DP2 = {
    model: 'Qwen/Qwen3-8B',
    ranks: [
      { kvTotalBlocks: 2048, activeDecodeBlocks: 1664, numRequestsWaiting: 4 },
      { kvTotalBlocks: 2040, activeDecodeBlocks: 204, numRequestsWaiting: 0 },
    ],
  };

  it('reads vLLM >= 0.10, which answers the filtered path with its whole exposition, from that one answer', async () => {
    const asked: string[] = [];
    const body = fixture('metrics-v0.11-dp2.txt');
    expect(body.length).toBeGreaterThan(40_000);
    const http = answeringHttp({ [VLLM_FILTERED_PATH]: body }, asked);
    expect(await new VllmAdapter().scrape(http)).toEqual(DP2);
    expect(asked).toEqual([VLLM_FILTERED_PATH]);
  });

  it('asks for the four families it reads, and reads an exporter that honours the filter', async () => {
    const asked: string[] = [];
    const http = answeringHttp(
      { [VLLM_FILTERED_PATH]: filtered(fixture('metrics-v0.11-dp2.txt')) },
      asked,
    );
    expect(await new VllmAdapter().scrape(http)).toEqual(DP2);
    expect(asked).toEqual([VLLM_FILTERED_PATH]);
    expect(decodeURIComponent(VLLM_FILTERED_PATH)).toBe(
      '/metrics?name[]=vllm:kv_cache_usage_perc&name[]=vllm:gpu_cache_usage_perc' +
        '&name[]=vllm:cache_config_info&name[]=vllm:num_requests_waiting',
    );
  });

  it('falls back to the whole /metrics, and stays there, when the filter answers nothing', async () => {
    // prometheus_client's own exporter over a multiprocess registry answers a filter with nothing.
    const sut = new VllmAdapter();
    const asked: string[] = [];
    const answers = { [VLLM_FILTERED_PATH]: '', '/metrics': fixture('metrics-v0.11-dp2.txt') };
    const http = answeringHttp(answers, asked);
    expect(await sut.scrape(http)).toEqual(DP2);
    expect(await sut.scrape(http)).toEqual(DP2);
    expect(asked).toEqual([VLLM_FILTERED_PATH, '/metrics', '/metrics']);
    http.notes.clear(); // what a failed scrape does: the engine may have been replaced
    await sut.scrape(http);
    expect(asked.slice(3)).toEqual([VLLM_FILTERED_PATH, '/metrics']);
  });

  it('reports vLLM 0.8 V1 (num_gpu_blocks="None") with 0 KV blocks and its waiting requests, and says why', () => {
    const sut = mapVllmMetrics(fixture('metrics-v0.8-v1.txt'));
    expect(sut.model).toBe('meta-llama/Llama-3.1-8B-Instruct');
    expect(sut.ranks).toEqual([{ kvTotalBlocks: 0, activeDecodeBlocks: 0, numRequestsWaiting: 2 }]);
    expect(sut.gaps).toEqual([
      { gap: 'kv_blocks', reason: expect.stringMatching(/num_gpu_blocks.*before 0\.8\.5/) },
    ]);
  });

  it('takes the block count from num_gpu_blocks_override when vLLM 0.8 was started with it', () => {
    const body = fixture('metrics-v0.8-v1.txt').replace(
      'num_gpu_blocks_override="None"',
      'num_gpu_blocks_override="8192"',
    );
    expect(mapVllmMetrics(body)).toEqual({
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      ranks: [{ kvTotalBlocks: 8192, activeDecodeBlocks: 3584, numRequestsWaiting: 2 }],
    });
  });

  it('reads multiprocess mode (--api-server-count 2): the highest per-process usage, flagged as of unknown age', () => {
    const sut = mapVllmMetrics(fixture('metrics-v0.11-api-servers2.txt'));
    expect(sut.ranks).toEqual([
      { kvTotalBlocks: 4096, activeDecodeBlocks: 2576, numRequestsWaiting: 3 },
    ]);
    expect(sut.gaps).toEqual([{ gap: 'freshness', reason: expect.stringMatching(/pid/) }]);
  });

  it('reads the older vllm:gpu_cache_usage_perc and an engine-less cache_config_info', () => {
    const sut = mapVllmMetrics(fixture('metrics-v0.6-single.txt'));
    expect(sut).toEqual({
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      ranks: [{ kvTotalBlocks: 7281, activeDecodeBlocks: 3641, numRequestsWaiting: 2 }],
    });
  });

  it('prefers the current metric name when both are served', () => {
    const body = [
      'vllm:gpu_cache_usage_perc{model_name="m"} 0.9',
      'vllm:kv_cache_usage_perc{model_name="m"} 0.25',
      'vllm:cache_config_info{num_gpu_blocks="100"} 1',
    ].join('\n');
    expect(mapVllmMetrics(body).ranks[0].activeDecodeBlocks).toBe(25);
  });

  it('numbers ranks densely in engine order (engines 2 and 10 served by this node)', () => {
    const body = [
      'vllm:kv_cache_usage_perc{engine="10",model_name="m"} 0.5',
      'vllm:kv_cache_usage_perc{engine="2",model_name="m"} 1',
      'vllm:cache_config_info{engine="2",num_gpu_blocks="10"} 1',
      'vllm:cache_config_info{engine="10",num_gpu_blocks="20"} 1',
    ].join('\n');
    expect(mapVllmMetrics(body).ranks).toEqual([
      { kvTotalBlocks: 10, activeDecodeBlocks: 10, numRequestsWaiting: undefined },
      { kvTotalBlocks: 20, activeDecodeBlocks: 10, numRequestsWaiting: undefined },
    ]);
  });

  it('says why when there is no cache_config_info at all', () => {
    expect(mapVllmMetrics('vllm:kv_cache_usage_perc 0.5\n').gaps?.map((g) => g.gap)).toEqual([
      'kv_blocks',
    ]);
  });

  it('ignores malformed lines of families it does not read', () => {
    const body = `garbage{{{ line\nother_metric{a="b" 1\n${fixture('metrics-v0.6-single.txt')}`;
    expect(mapVllmMetrics(body).ranks).toHaveLength(1);
  });

  it.each([
    ['NaN usage', 'vllm:kv_cache_usage_perc 0.5', 'NaN'],
    ['+Inf usage', 'vllm:kv_cache_usage_perc 0.5', '+Inf'],
    ['negative usage', 'vllm:kv_cache_usage_perc 0.5', '-0.5'],
    ['usage above 1', 'vllm:kv_cache_usage_perc 0.5', '1.5'],
  ])('refuses %s', (_name, line, value) => {
    const body = `${line.replace('0.5', value)}\nvllm:cache_config_info{num_gpu_blocks="100"} 1`;
    expect(() => mapVllmMetrics(body)).toThrow(UnparsableError);
  });

  it.each([
    ['no usage metric', 'vllm:cache_config_info{num_gpu_blocks="100"} 1'],
    [
      'a block count that is not a number',
      'vllm:kv_cache_usage_perc 0.5\nvllm:cache_config_info{num_gpu_blocks="lots"} 1',
    ],
    [
      'NaN in one process copy of the usage',
      'vllm:kv_cache_usage_perc{pid="1"} 0.5\nvllm:kv_cache_usage_perc{pid="2"} NaN\n' +
        'vllm:cache_config_info{num_gpu_blocks="9"} 1',
    ],
    [
      'malformed wanted line',
      'vllm:kv_cache_usage_perc{engine="0" 0.5\nvllm:cache_config_info{num_gpu_blocks="9"} 1',
    ],
    [
      'negative waiting',
      'vllm:kv_cache_usage_perc 0.5\nvllm:cache_config_info{num_gpu_blocks="9"} 1\nvllm:num_requests_waiting -1',
    ],
  ])('refuses %s', (_name, body) => {
    expect(() => mapVllmMetrics(body)).toThrow(UnparsableError);
  });
});
