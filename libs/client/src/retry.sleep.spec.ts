import { MockAgent } from 'undici';
import { abortableSleep } from './retry.sleep';
import { SluiceClient } from './sluice.client';

const ORIGIN = 'http://sluice.test';

describe('abortableSleep', () => {
  it('resolves after the delay', async () => {
    const start = performance.now();
    await abortableSleep(20);
    expect(performance.now() - start).toBeGreaterThanOrEqual(15);
  });

  it("rejects with the signal's reason when aborted during the wait, or before it", async () => {
    const ac = new AbortController();
    const waiting = abortableSleep(60_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    await expect(abortableSleep(10, ac.signal)).rejects.toThrow('stop');
  });
});

describe('SluiceClient abort', () => {
  function overloadedFrontend() {
    const agent = new MockAgent();
    agent.disableNetConnect();
    let requests = 0;
    agent
      .get(ORIGIN)
      .intercept({ path: '/v1/chat/completions', method: 'POST' })
      .reply(() => {
        requests++;
        return {
          statusCode: 503,
          data: '{"message":"busy","type":"service_unavailable","code":503}',
          responseOptions: { headers: { 'retry-after': '10' } },
        };
      })
      .persist();
    // the real sleep: the abort must cut a 10 s Retry-After wait short
    const sut = new SluiceClient({ baseUrl: ORIGIN, dispatcher: agent });
    return { sut, requests: () => requests };
  }
  const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

  it('stops waiting for the next attempt as soon as the signal aborts', async () => {
    const { sut, requests } = overloadedFrontend();
    const ac = new AbortController();
    const start = performance.now();
    setTimeout(() => ac.abort(), 50);
    const err = await sut.chatCompletions(body, { signal: ac.signal }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'AbortError' });
    expect(performance.now() - start).toBeLessThan(2000);
    expect(requests()).toBe(1);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const { sut, requests } = overloadedFrontend();
    const signal = AbortSignal.abort(new Error('gone'));
    await expect(sut.chatCompletions(body, { signal })).rejects.toThrow('gone');
    expect(requests()).toBe(0);
  });
});
