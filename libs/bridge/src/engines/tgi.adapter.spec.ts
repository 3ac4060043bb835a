import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answeringHttp } from './engine-http.fixture';
import { mapTgi, TgiAdapter } from './tgi.adapter';
import { UnparsableError } from '../unparsable.error';

const FIXTURES = join(__dirname, '../../../../test/fixtures/engines/tgi');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const json = (name: string): unknown => JSON.parse(fixture(name));

describe('TgiAdapter', () => {
  it('maps the batch token budget (v3: capacity from tgi_batch_max_total_tokens)', async () => {
    const sut = new TgiAdapter();
    const answers: Record<string, string> = {
      '/info': fixture('info.json'),
      '/metrics': fixture('metrics.txt'),
    };
    expect(await sut.scrape(answeringHttp(answers))).toEqual({
      model: 'mistralai/Mistral-7B-Instruct-v0.3',
      ranks: [{ kvTotalBlocks: 48512, activeDecodeBlocks: 36384, numRequestsWaiting: 3 }],
    });
  });

  it('takes the capacity from /info max_batch_total_tokens (v2)', () => {
    expect(mapTgi(json('info-v2.json'), fixture('metrics-v2.txt'))).toEqual({
      model: 'bigcode/starcoder2-3b',
      ranks: [{ kvTotalBlocks: 16000, activeDecodeBlocks: 4000, numRequestsWaiting: 0 }],
    });
  });

  it('reads an engine that has not batched yet as idle', () => {
    expect(mapTgi(json('info-v2.json'), '').ranks).toEqual([
      { kvTotalBlocks: 16000, activeDecodeBlocks: 0, numRequestsWaiting: undefined },
    ]);
  });

  it('reports a TGI that gives no token budget with 0 KV blocks and its queue, and says why', () => {
    const sut = mapTgi(json('info.json'), 'tgi_batch_current_max_tokens 5\ntgi_queue_size 2\n');
    expect(sut.ranks).toEqual([{ kvTotalBlocks: 0, activeDecodeBlocks: 0, numRequestsWaiting: 2 }]);
    expect(sut.gaps).toEqual([
      { gap: 'kv_blocks', reason: expect.stringMatching(/max_batch_total_tokens/) },
    ]);
  });

  it.each([
    ['negative current tokens', json('info-v2.json'), 'tgi_batch_current_max_tokens -5\n'],
    ['Inf queue', json('info-v2.json'), 'tgi_queue_size +Inf\n'],
    ['/info not an object', [1, 2], fixture('metrics.txt')],
  ])('refuses %s', (_name, info, metrics) => {
    expect(() => mapTgi(info, metrics)).toThrow(UnparsableError);
  });
});
