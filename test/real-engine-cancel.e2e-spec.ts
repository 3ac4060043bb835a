import {
  CompletionOutcome,
  FrontendStarted,
  LlamaServer,
  metricSamples,
  startFrontend,
  streamCompletion,
} from '@sluice/testkit';
import { useProcesses } from './support/fixtures';
import { NATS_URL, waitFor } from './support/processes';
import { describeRealEngine } from './support/real-engine';

/**
 * The slower of the two models: under a loaded machine the engine takes the N requests in slowly,
 * and with `micro` the first ones could end before the last arrived (its requests_deferred then
 * never reached HELD).
 */
const MODEL = 'tiny';
/** Requests the clients send and then abandon: 4 in the engine's slots, the rest deferred. */
const N = 64;
/**
 * Of which the engine must hold at least these when they are abandoned, every other one having
 * ended: on an idle machine it holds all N, but under npm test's load its HTTP threads take them
 * in so slowly that the first ones end before the last arrive (seen: 50 held, 14 ended).
 */
const HELD = 40;
/** Tokens each asks for: tens of seconds on one core, so nothing ends by itself. */
const TOKENS = 1500;
/**
 * How long the engine may take to drop the work of clients that left through Sluice: what
 * docs/operations.md promises ("Clients that leave"), or, on a machine so loaded that llama-server
 * itself takes longer for its own clients (the first test measures it), twice that.
 */
const DRAIN_MS = 3000;
/** How long the yardstick may take at all: llama-server alone on a 2-core machine under load. */
const YARDSTICK_MS = 60_000;
/** Getting 64 requests into a busy 2-core machine's engine takes long; speed is not the point. */
const LOAD_MS = 180_000;
/** A test: loading the engine, then its drain, then a frontend's start. */
const TEST_MS = 360_000;

/**
 * Clients that leave, with Debian's real llama-server behind the frontend's in-process bridge: the
 * engine drops their work as soon as it would for clients of its own, whatever the admission
 * mode, and a request whose client left while it waited in the frontend's queue never reaches
 * it. llama-server stops a streamed request whose client left at its next token; it runs a unary
 * one to its end even for its own clients (docs/engines.md), so unary requests are not measured
 * here.
 */
describeRealEngine('clients that leave, with the real llama-server', () => {
  const group = useProcesses();
  let llama: LlamaServer;

  beforeAll(async () => {
    llama = await LlamaServer.start({ model: MODEL, group });
  }, 120_000);

  beforeEach(() => idle(), LOAD_MS);

  /** The engine's slots processing and requests deferred; undefined while it does not answer. */
  const engineLoad = async () => {
    const res = await fetch(`${llama.url}/metrics`, { signal: AbortSignal.timeout(2000) });
    const text = await res.text();
    const one = (name: string) => metricSamples(text, `llamacpp:${name}`)[0];
    return { processing: one('requests_processing'), deferred: one('requests_deferred') };
  };

  const idle = () =>
    waitFor(
      async () => {
        const load = await engineLoad();
        return load.processing === 0 && load.deferred === 0;
      },
      'the engine idle',
      LOAD_MS,
      100,
    );

  /** What llama-server took to drop the work of its own clients that left (the first test). */
  let yardstickMs = 0;
  /** How long the engine may take through Sluice: as long as alone (twice, for the noise), at least DRAIN_MS. */
  const drainMs = () => Math.max(DRAIN_MS, Math.ceil(2 * yardstickMs));

  /**
   * Sends N streamed requests to `url`, waits until the engine holds all that have not ended (HELD
   * at least), aborts them all,
   * and resolves with how long the engine took to drop them (at most `withinMs`).
   */
  async function abandon(url: string, withinMs: number): Promise<number> {
    const stop = new AbortController();
    let ended = 0;
    const sent = Array.from({ length: N }, (_, i) =>
      streamCompletion(url, {
        model: MODEL,
        maxTokens: TOKENS,
        tag: `leave ${i}`,
        signal: stop.signal,
      }).finally(() => ended++),
    );
    try {
      let last = {};
      await waitFor(
        async () => {
          const load = await engineLoad();
          last = load;
          const held = (load.processing ?? 0) + (load.deferred ?? 0);
          return held >= HELD && held + ended >= N;
        },
        `${HELD} or more requests held by the engine (processing or deferred) and the rest ended`,
        LOAD_MS,
        100,
      ).catch((err: Error) => {
        throw new Error(`${err.message} (last seen: ${JSON.stringify(last)}, ${ended} ended)`);
      });
    } finally {
      stop.abort();
      // A request may end while the engine takes the others in: those are not counted.
      await Promise.all(sent);
    }
    const t0 = performance.now();
    await waitFor(
      async () => {
        const load = await engineLoad();
        return load.processing === 0 && load.deferred === 0 ? load : undefined;
      },
      `the engine dropped all ${N} requests within ${withinMs} ms`,
      withinMs,
      50,
    );
    return performance.now() - t0;
  }

  async function frontend(flags: string[]): Promise<FrontendStarted> {
    const fe = await startFrontend({
      natsUrl: NATS_URL,
      group,
      flags: ['--engine-target', `llamacpp=llama=${llama.url}`, ...flags],
    });
    await waitFor(
      async () =>
        metricSamples(
          await (await fetch(`${fe.url}/metrics`)).text(),
          'dynamo_frontend_worker_kv_total_blocks',
          {
            worker_id: 'llama',
          },
        )[0] === 4,
      'the engine reported',
      60_000,
    );
    return fe;
  }

  it(
    'llama-server alone: the work of clients that left is gone at once (the yardstick)',
    async () => {
      yardstickMs = await abandon(llama.url, YARDSTICK_MS);
      process.stdout.write(
        `llama-server alone dropped the work of ${N} clients that left in ${Math.round(yardstickMs)} ms; ` +
          `through Sluice it may take ${drainMs()} ms\n`,
      );
    },
    TEST_MS,
  );

  it(
    'through Sluice with --admission-control none: the engine drops it as for its own clients',
    async () => {
      const fe = await frontend(['--admission-control', 'none']);
      try {
        await abandon(fe.url, drainMs());
      } finally {
        await fe.proc.stop();
      }
    },
    TEST_MS,
  );

  it(
    'through Sluice with token-capacity: queued requests never reach the engine, admitted ones are dropped',
    async () => {
      // Busy when all 4 slots are in use (docs/engines.md): a critical request then waits in the
      // frontend's queue for the room the standard ones hold (docs/operations.md).
      const fe = await frontend([
        ...['--admission-control', 'token-capacity'],
        ...['--active-decode-blocks-threshold', '0.75', '--waiting-requests-threshold', '0'],
      ]);
      const gauge = async (name: string, labels: Record<string, string>) =>
        metricSamples(await (await fetch(`${fe.url}/metrics`)).text(), name, labels)[0];
      const held = new AbortController();
      const queued = new AbortController();
      const send = (tag: string, signal: AbortSignal, headers: Record<string, string> = {}) =>
        streamCompletion(fe.url, { model: MODEL, maxTokens: TOKENS, tag, signal, headers });
      const holding = Array.from({ length: 4 }, (_, i) => send(`hold ${i}`, held.signal));
      let waiting: Promise<CompletionOutcome>[] = [];
      try {
        await waitFor(
          async () =>
            (await engineLoad()).processing === 4 &&
            (await gauge('dynamo_frontend_worker_busy', { worker_id: 'llama' })) === 1,
          'the 4 slots in use and the engine busy, as the frontend sees it',
          LOAD_MS,
          100,
        );
        waiting = Array.from({ length: 3 }, (_, i) =>
          send(`wait ${i}`, queued.signal, { 'x-sluice-priority': 'critical' }),
        );
        await waitFor(
          async () => (await gauge('dynamo_frontend_queued_requests', { model: MODEL })) === 3,
          '3 critical requests in the frontend queue',
          LOAD_MS,
        );
        queued.abort();
        for (const o of await Promise.all(waiting)) expect(o).toMatchObject({ status: 0 });
        await waitFor(
          async () => (await gauge('dynamo_frontend_queued_requests', { model: MODEL })) === 0,
          'the frontend queue empty',
        );
        // They left the queue and were never sent: the engine holds the 4 it held, none deferred.
        expect(await engineLoad()).toEqual({ processing: 4, deferred: 0 });
        expect(await gauge('dynamo_frontend_inflight_requests', { model: MODEL })).toBe(4);
      } finally {
        queued.abort();
        held.abort();
        await Promise.all([...holding, ...waiting]);
      }
      try {
        await waitFor(
          async () => {
            const load = await engineLoad();
            return load.processing === 0 && load.deferred === 0;
          },
          `the engine dropped the admitted requests within ${drainMs()} ms`,
          drainMs(),
          50,
        );
      } finally {
        await fe.proc.stop();
      }
    },
    TEST_MS,
  );
});
