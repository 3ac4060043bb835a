import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answeringHttp } from './engine-http.fixture';
import { LlamacppAdapter, mapLlamacpp } from './llamacpp.adapter';
import { UnparsableError } from '../unparsable.error';

const FIXTURES = join(__dirname, '../../../../test/fixtures/engines/llamacpp');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const json = (name: string): unknown => JSON.parse(fixture(name));

const http = answeringHttp;

describe('LlamacppAdapter', () => {
  it('maps slots to blocks, deferred requests to waiting, the alias to the model', async () => {
    const sut = new LlamacppAdapter();
    const snapshot = await sut.scrape(
      http({
        '/props': fixture('props.json'),
        '/slots': fixture('slots.json'),
        '/metrics': fixture('metrics.txt'),
      }),
    );
    expect(snapshot).toEqual({
      model: 'qwen2.5-7b-instruct',
      ranks: [{ kvTotalBlocks: 4, activeDecodeBlocks: 3, numRequestsWaiting: 6 }],
    });
  });

  it('names the model from /v1/models when there is no alias', async () => {
    const sut = new LlamacppAdapter();
    const snapshot = await sut.scrape(
      http({
        '/props': fixture('props-no-alias.json'),
        '/slots': JSON.stringify([
          { id: 0, is_processing: false },
          { id: 1, is_processing: false },
        ]),
        '/v1/models': fixture('models.json'),
      }),
    );
    expect(snapshot).toEqual({
      model: 'Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf',
      ranks: [{ kvTotalBlocks: 2, activeDecodeBlocks: 0, numRequestsWaiting: undefined }],
    });
  });

  it('uses total_slots and requests_processing when /slots is disabled', () => {
    const sut = mapLlamacpp({
      props: json('props.json'),
      slots: undefined,
      metrics: fixture('metrics.txt'),
    });
    expect(sut.ranks).toEqual([{ kvTotalBlocks: 4, activeDecodeBlocks: 3, numRequestsWaiting: 6 }]);
  });

  it.each([
    ['slots not a list', { slots: { a: 1 }, metrics: undefined }],
    ['a slot without is_processing', { slots: [{ id: 0 }], metrics: undefined }],
    ['no slots and no metrics', { slots: undefined, metrics: undefined }],
    ['negative deferred', { slots: [], metrics: 'llamacpp:requests_deferred -2\n' }],
    ['NaN deferred', { slots: [], metrics: 'llamacpp:requests_deferred NaN\n' }],
  ])('refuses %s', (_name, answers) => {
    expect(() => mapLlamacpp({ props: json('props.json'), ...answers })).toThrow(UnparsableError);
  });
});
