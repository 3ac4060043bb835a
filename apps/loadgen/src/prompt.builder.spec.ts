import { estimateTextTokens } from '@sluice/contracts';
import { parseLoadgenArgs } from './loadgen.options';
import { buildPrompt, buildRequestBody, requestPath } from './prompt.builder';

describe('prompt builder', () => {
  it('builds a prompt of the requested size, the same for the same index', () => {
    const sut = buildPrompt(7, 1000);
    expect(estimateTextTokens(sut)).toBe(1000);
    expect(buildPrompt(7, 1000)).toBe(sut);
  });

  it('varies the prompt per request from the first characters on', () => {
    expect(buildPrompt(1, 50).slice(0, 12)).not.toBe(buildPrompt(2, 50).slice(0, 12));
    expect(buildPrompt(1, 50).slice(20)).not.toBe(buildPrompt(2, 50).slice(20));
  });

  it('appends the OpenAI path to the base URL, tolerating a trailing /v1', () => {
    const run = (argv: string[]) => {
      const c = parseLoadgenArgs(argv);
      if (c.kind !== 'run') throw new Error('expected a run');
      return c.options;
    };
    expect(requestPath(run([]))).toBe('/v1/chat/completions');
    expect(requestPath(run(['--url', 'http://h/v1/', '--endpoint', 'completions']))).toBe(
      '/v1/completions',
    );
    expect(requestPath(run(['--url', 'http://h/sluice']))).toBe('/sluice/v1/chat/completions');
    const body = JSON.parse(buildRequestBody(run(['--max-tokens', '9']), 3));
    expect(body).toMatchObject({ model: 'Qwen/Qwen3-0.6B', max_tokens: 9, stream: true });
    expect(body.messages[0].content).toBe(buildPrompt(3, 1000));
  });
});
