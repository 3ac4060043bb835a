import { kvReport } from '@sluice/testkit';
import { MODEL } from './support/bus';
import { FakeWorker } from './support/fake-worker';
import { useSystem } from './support/fixtures';
import { keepUnread, post } from './support/http';
import { waitFor } from './support/processes';

/** Generous: a busy 2-core machine can be slow to apply a report; speed belongs to the bench. */
const SETTLED_MS = 60_000;

const KV_TOTAL = 100;
const DECODE_THRESHOLD = 0.5;
/** "Hello there" is 3 tokens + 4 of chat framing; 7 + 153 = 160 tokens: 10 KV blocks of 16. */
const PROMPT = 'Hello there';
const MAX_TOKENS = 153;
const BLOCKS_PER_REQUEST = 10;
const BURST = 20;

interface RankView {
  active_decode_blocks: number;
  max_num_batched_tokens: number | null;
  reserved_decode_blocks: number;
  reserved_prefill_tokens: number;
  reserved_waiting_requests: number;
  busy: boolean;
}

interface WorkerView {
  worker_id: string;
  inflight_requests: number;
  ranks: RankView[];
}

/**
 * Reservations between reports (issue 14), end to end: a real frontend process, real NATS and a
 * real simulated worker, slowed down so that requests stay in flight (and waiting for their
 * first token) for many seconds. The worker publishes nothing; the test publishes its reports,
 * only when it chooses, as a reporter far slower than the engine bridge's 250 ms.
 */
describe('reservations between load reports', () => {
  const sys = useSystem({
    bus: true,
    // Slowed 500×: even a short prompt's first token takes over 8 s.
    workers: [['--speedup', '0.002']],
    frontend: [
      ...['--admission-control', 'token-capacity'],
      ...['--active-decode-blocks-threshold', String(DECODE_THRESHOLD)],
      // Reports come only when the test sends one: the worker must not expire meanwhile.
      ...['--worker-ttl-ms', '120000'],
    ],
  });
  const open: AbortController[] = [];
  const reported = new Set<string>();
  let marker = 1000;
  /** Requests of the bursts whose 200 (sent with their first token) reached the client. */
  let answered = 0;

  afterEach(async () => {
    for (const c of open.splice(0)) c.abort();
    for (const id of reported) {
      sys.bus.workerDown(sys.fe.namespace, id);
      await waitFor(async () => (await worker(id)) === undefined, `${id} removed`, SETTLED_MS);
    }
    reported.clear();
  });

  async function worker(workerId: string): Promise<WorkerView | undefined> {
    const status = (await (await fetch(`${sys.fe.url}/ui/status.json`)).json()) as {
      models: Array<{ workers: WorkerView[] }>;
    };
    return status.models.flatMap((m) => m.workers).find((w) => w.worker_id === workerId);
  }

  const rank = async (workerId: string): Promise<RankView | undefined> =>
    (await worker(workerId))?.ranks[0];

  /**
   * Publishes a report measured at `measuredMs` and waits until the frontend applied it (each
   * report carries its own max_num_batched_tokens as a marker the status page shows).
   */
  async function report(
    workerId: string,
    fields: { active_decode_blocks?: number; active_prefill_tokens?: number },
    measuredMs = Date.now(),
    endpoint = sys.worker.url,
  ): Promise<void> {
    const mark = ++marker;
    reported.add(workerId);
    sys.bus.raw(sys.fe.namespace, 'kv_metrics', {
      ...kvReport({ worker_id: workerId, endpoint, kv_total_blocks: KV_TOTAL }),
      ...fields,
      max_num_batched_tokens: mark,
      timestamp_ms: measuredMs,
    });
    await waitFor(
      async () => (await rank(workerId))?.max_num_batched_tokens === mark,
      `report ${mark} of ${workerId} applied`,
      SETTLED_MS,
    );
  }

  /**
   * Sends `n` streamed requests at once, and waits until each one is either refused (503, sent
   * at once) or in flight on the worker (its 200 comes with the first token, seconds later; the
   * stream stays open until the test ends). Answers how many of each.
   */
  async function burst(
    workerId: string,
    n: number,
    content: string,
    maxTokens: number,
  ): Promise<{ refused: number; inflight: number }> {
    const before = (await worker(workerId))?.inflight_requests ?? 0;
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) {
      const c = new AbortController();
      open.push(c);
      fetch(`${sys.fe.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: MODEL,
          messages: [{ role: 'user', content }],
          max_tokens: maxTokens,
          stream: true,
        }),
        signal: c.signal,
      }).then(
        async (res) => {
          keepUnread(res, c.signal);
          statuses.push(res.status);
          if (res.status === 200) answered++;
          else await res.text();
        },
        () => undefined, // aborted at the end of the test
      );
    }
    const refused = (): number => statuses.filter((s) => s === 503).length;
    const inflight = await waitFor(
      async () => {
        const now = ((await worker(workerId))?.inflight_requests ?? 0) - before;
        return now + refused() === n && now;
      },
      `each of ${n} requests refused or in flight`,
      SETTLED_MS,
    );
    expect(statuses.every((s) => s === 503 || s === 200)).toBe(true);
    return { refused: refused(), inflight };
  }

  it('stops admitting a burst sent between two reports at the decode threshold, and a report measured after it takes the reservations back', async () => {
    await report('burst', { active_decode_blocks: 0 });
    const beforeBurst = Date.now();
    const sent = await burst('burst', BURST, PROMPT, MAX_TOKENS);

    // The report alone says the worker is idle, so without reservations all 20 would go to it
    // (200 blocks: twice the cache). The threshold leaves room for 5 requests of 10 blocks; the
    // busy rule is strict, so the 6th is admitted at exactly 50 of 100 and the 7th refused.
    const capacity = (DECODE_THRESHOLD * KV_TOTAL) / BLOCKS_PER_REQUEST;
    expect(sent).toEqual({ inflight: capacity + 1, refused: BURST - capacity - 1 });
    expect(await rank('burst')).toMatchObject({
      active_decode_blocks: 0,
      reserved_decode_blocks: (capacity + 1) * BLOCKS_PER_REQUEST,
      busy: true,
    });

    // A report measured before the burst, arriving after it, shows none of it: still busy.
    await report('burst', { active_decode_blocks: 0 }, beforeBurst - 1);
    expect(await burst('burst', 1, PROMPT, MAX_TOKENS)).toEqual({ inflight: 0, refused: 1 });
    expect((await rank('burst'))?.reserved_decode_blocks).toBe(60);

    // A report measured now holds the burst itself (here: 30 blocks still in use): the
    // reservations are dropped, the worker is judged on the report alone and admits again.
    await report('burst', { active_decode_blocks: 30 });
    expect(await rank('burst')).toMatchObject({ reserved_decode_blocks: 0, busy: false });
    expect(await burst('burst', 1, PROMPT, MAX_TOKENS)).toEqual({ inflight: 1, refused: 0 });
    expect((await rank('burst'))?.reserved_decode_blocks).toBe(BLOCKS_PER_REQUEST);
  });

  it('keeps a streamed request reserved across reports measured before its worker answered its status line', async () => {
    // A worker that has read the requests but not answered them yet: a lagging event loop, or an
    // engine still tokenising. Its reports cannot show them; it answers when the test says.
    const held: Array<() => void> = [];
    const lagging = await FakeWorker.start(
      (_req, res) =>
        new Promise<void>((resolve) => {
          held.push(() => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write('data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n');
            resolve(); // the stream stays open until the test ends
          });
        }),
    );
    try {
      const url = lagging.url;
      await report('lagging', { active_decode_blocks: 0 }, Date.now(), url);
      const capacity = (DECODE_THRESHOLD * KV_TOTAL) / BLOCKS_PER_REQUEST;
      const sent = await burst('lagging', capacity + 2, PROMPT, MAX_TOKENS);
      expect(sent).toEqual({ inflight: capacity + 1, refused: 1 });
      await waitFor(
        () => Promise.resolve(lagging.seen.length === capacity + 1),
        'the worker read every admitted request',
        SETTLED_MS,
      );

      // Measured after every request was sent and read, before any was answered: it shows none
      // of them, and takes none of the reservations back. Still busy.
      await report('lagging', { active_decode_blocks: 0 }, Date.now(), url);
      expect(await rank('lagging')).toMatchObject({
        reserved_decode_blocks: (capacity + 1) * BLOCKS_PER_REQUEST,
        busy: true,
      });
      expect(await burst('lagging', 1, PROMPT, MAX_TOKENS)).toEqual({ inflight: 0, refused: 1 });

      // The worker answers their status lines; a report measured after that holds them.
      const before = answered;
      for (const answer of held.splice(0)) answer();
      await waitFor(
        () => Promise.resolve(answered - before === capacity + 1),
        'the first tokens relayed',
        SETTLED_MS,
      );
      await report('lagging', { active_decode_blocks: 30 }, Date.now(), url);
      expect(await rank('lagging')).toMatchObject({ reserved_decode_blocks: 0, busy: false });
    } finally {
      await lagging.stop();
    }
  });

  it('adds the prompts sent since the report to a reported prefill load', async () => {
    // A prefill threshold of 1000 tokens for this model instead of the decode one (a decode
    // threshold of 1 cannot fire: usage never exceeds the whole cache).
    const set = await post(`${sys.fe.url}/busy_threshold`, {
      model: MODEL,
      active_decode_blocks_threshold: 1,
      active_prefill_tokens_threshold: 1000,
    });
    expect(set.status).toBe(200);
    // 1,584 characters: 396 tokens + 4 of framing = 400 prompt tokens; one output token.
    const long = 'x'.repeat(1584);
    try {
      await report('prefill', { active_prefill_tokens: 0, active_decode_blocks: 0 });
      // 0, 400 and 800 tokens are not over 1000: three admitted, then 1200 is.
      expect(await burst('prefill', 10, long, 1)).toEqual({ inflight: 3, refused: 7 });
      // The worker had KV room for each: none of them waits in its queue.
      expect(await rank('prefill')).toMatchObject({
        reserved_prefill_tokens: 1200,
        reserved_waiting_requests: 0,
        busy: true,
      });
    } finally {
      await post(`${sys.fe.url}/busy_threshold`, {
        model: MODEL,
        active_decode_blocks_threshold: null,
        active_prefill_tokens_threshold: null,
      });
    }
  });
});
