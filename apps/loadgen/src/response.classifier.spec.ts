import { OVERLOAD_MESSAGE } from '@sluice/contracts';
import {
  classifyErrorResponse,
  classifyFailure,
  classifyUnaryResponse,
} from './response.classifier';

const overload = JSON.stringify({
  message: OVERLOAD_MESSAGE,
  type: 'service_unavailable',
  code: 503,
});

describe('response classifier', () => {
  it('counts the contract 503 as a rejection with its latency', () => {
    expect(classifyErrorResponse(503, overload, 1.5)).toEqual({ kind: 'rejected', latencyMs: 1.5 });
  });

  it('does not count a 503 without the service_unavailable body as a rejection', () => {
    expect(classifyErrorResponse(503, '<html>busy</html>', 1)).toMatchObject({
      kind: 'error',
      label: 'http_503',
    });
    const noWorkers = JSON.stringify({
      message: "No workers available for model 'm'",
      type: 'service_unavailable',
      code: 503,
    });
    expect(classifyErrorResponse(503, noWorkers, 1)).toMatchObject({
      kind: 'error',
      label: 'http_503:no_workers',
    });
  });

  it('labels other statuses with their error type', () => {
    const body = JSON.stringify({ message: 'x', type: 'upstream_error', code: 502 });
    expect(classifyErrorResponse(502, body, 1)).toMatchObject({ label: 'http_502:upstream_error' });
    expect(classifyErrorResponse(404, '', 1)).toMatchObject({ label: 'http_404' });
  });

  it('reads output tokens of a unary 200 from usage, TTFT being the latency', () => {
    const body = JSON.stringify({
      choices: [{ message: { content: 'hi' } }],
      usage: { completion_tokens: 12 },
    });
    expect(classifyUnaryResponse(body, 80)).toEqual({
      kind: 'ok',
      latencyMs: 80,
      ttftMs: 80,
      outputTokens: 12,
    });
  });

  it('marks connection failures so an unreachable target can be told apart', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyFailure(refused)).toEqual({
      kind: 'error',
      label: 'ECONNREFUSED',
      connectFailure: true,
    });
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect(classifyFailure(reset)).toMatchObject({ connectFailure: false });
  });
});
