import { kvReport, startFrontend, uniqueNamespace } from '@sluice/testkit';
import { MODEL } from './support/bus';
import { useSystem } from './support/fixtures';
import { keepUnread } from './support/http';
import { FrontendProcess, NATS_URL, waitFor } from './support/processes';

/** Generous: a busy 2-core machine can be slow to apply a report; speed belongs to the bench. */
const SETTLED_MS = 60_000;

const KV_TOTAL = 100;
const DECODE_THRESHOLD = 0.5;
/** "Hello there" is 3 tokens + 4 of chat framing; 7 + 153 = 160 tokens: 10 KV blocks of 16. */
const PROMPT = 'Hello there';
const MAX_TOKENS = 153;
const BLOCKS_PER_REQUEST = 10;
/**
 * The threshold leaves room for 5 requests of 10 blocks; the busy rule is strict, so the 6th is
 * admitted at exactly 50 of 100 blocks and the 7th refused.
 */
const ROOM = (DECODE_THRESHOLD * KV_TOTAL) / BLOCKS_PER_REQUEST + 1;
const REPLICAS = 3;
/** Enough for every replica to reach the threshold on its own requests alone. */
const BURST = REPLICAS * (ROOM + 1);
const WORKER = 'shared';

interface RankView {
  max_num_batched_tokens: number | null;
  reserved_decode_blocks: number;
  reserved_prefill_tokens: number;
  shared_decode_blocks?: number;
  busy: boolean;
}

interface WorkerView {
  worker_id: string;
  inflight_requests: number;
  ranks: RankView[];
}

/**
 * Reservations shared between frontend replicas (issue 42 item 3), end to end: three real
 * frontend processes on real NATS and PostgreSQL, one real simulated worker slowed down so that
 * requests stay in flight for many seconds, and load reports published by the test only when it
 * chooses (a worker with a long report interval). A burst spread over the replicas between two
 * reports must stop where one replica alone would stop, not three times as far.
 */
describe('reservations shared between frontend replicas', () => {
  const sys = useSystem({
    bus: true,
    database: 'shared_reservations',
    // Slowed 500×: even a short prompt's first token takes over 8 s.
    workers: [['--speedup', '0.002']],
  });
  const open: AbortController[] = [];
  let marker = 1000;

  /** `REPLICAS` frontends on a namespace of their own, the worker reported there by the test. */
  async function startReplicas(extra: string[] = []): Promise<FrontendProcess[]> {
    const namespace = uniqueNamespace();
    const flags = [
      ...['--database-url', sys.db.url()],
      ...['--admission-control', 'token-capacity'],
      ...['--active-decode-blocks-threshold', String(DECODE_THRESHOLD)],
      // Reports come only when the test sends one: the worker must not expire meanwhile.
      ...['--worker-ttl-ms', '120000'],
      ...extra,
    ];
    const started: FrontendProcess[] = [];
    for (let i = 0; i < REPLICAS; i++) {
      const name = `frontend-${namespace}-${i}`;
      started.push(
        await startFrontend({ natsUrl: NATS_URL, namespace, flags, group: sys.group, name }),
      );
    }
    return started;
  }

  afterAll(() => {
    for (const c of open.splice(0)) c.abort();
  });

  async function rank(fe: FrontendProcess): Promise<RankView | undefined> {
    const status = (await (await fetch(`${fe.url}/ui/status.json`)).json()) as {
      models: Array<{ workers: WorkerView[] }>;
    };
    const worker = status.models.flatMap((m) => m.workers).find((w) => w.worker_id === WORKER);
    return worker?.ranks[0];
  }

  async function inflight(fe: FrontendProcess): Promise<number> {
    const status = (await (await fetch(`${fe.url}/ui/status.json`)).json()) as {
      models: Array<{ workers: WorkerView[] }>;
    };
    const worker = status.models.flatMap((m) => m.workers).find((w) => w.worker_id === WORKER);
    return worker?.inflight_requests ?? 0;
  }

  /** Publishes a report measured now and waits until every live replica applied it. */
  async function report(activeDecodeBlocks: number, to: FrontendProcess[]): Promise<void> {
    const mark = ++marker;
    sys.bus.raw(to[0].namespace, 'kv_metrics', {
      ...kvReport({ worker_id: WORKER, endpoint: sys.worker.url, kv_total_blocks: KV_TOTAL }),
      active_decode_blocks: activeDecodeBlocks,
      max_num_batched_tokens: mark,
      timestamp_ms: Date.now(),
    });
    for (const fe of to) {
      await waitFor(
        async () => (await rank(fe))?.max_num_batched_tokens === mark,
        `report ${mark} applied by ${fe.url}`,
        SETTLED_MS,
      );
    }
  }

  /**
   * Sends one streamed request to `fe` and waits until it is refused (503, sent at once) or in
   * flight on the worker (its 200 comes with the first token, seconds later; the stream stays
   * open until the test ends). True when admitted.
   */
  async function send(fe: FrontendProcess): Promise<boolean> {
    const before = await inflight(fe);
    const c = new AbortController();
    open.push(c);
    let refused = false;
    fetch(`${fe.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: PROMPT }],
        max_tokens: MAX_TOKENS,
        stream: true,
      }),
      signal: c.signal,
    }).then(
      async (res) => {
        keepUnread(res, c.signal);
        if (res.status === 503) refused = true;
        else if (res.status !== 200) throw new Error(`unexpected status ${res.status}`);
        if (res.status !== 200) await res.text();
      },
      () => undefined, // aborted at the end of the test
    );
    return waitFor(
      async () => (refused ? 'refused' : (await inflight(fe)) > before && 'admitted'),
      `a request to ${fe.url} refused or in flight`,
      SETTLED_MS,
    ).then((outcome) => outcome === 'admitted');
  }

  /** Waits until each replica counts `blocks` reserved on the worker, its own and the others'. */
  async function everyReplicaCounts(blocks: number, among: FrontendProcess[]): Promise<void> {
    for (const fe of among) {
      await waitFor(
        async () => {
          const r = await rank(fe);
          return r && r.reserved_decode_blocks + (r.shared_decode_blocks ?? 0) === blocks;
        },
        `${fe.url} counting ${blocks} reserved blocks (its own plus the other replicas')`,
        SETTLED_MS,
      );
    }
  }

  it('stops a burst spread over three replicas where one replica would stop, and forgets the reservations of a replica that was killed', async () => {
    const replicas = await startReplicas();
    await report(0, replicas);

    // The burst, one request at a time round the replicas, each sent once the previous one's
    // reservation reached every replica. Without sharing each replica would admit 6 of its 7
    // (18 in all: 180 blocks on a 100-block worker whose report said idle).
    let admitted = 0;
    const byReplica = replicas.map(() => 0);
    for (let i = 0; i < BURST; i++) {
      const to = i % REPLICAS;
      if (await send(replicas[to])) {
        admitted++;
        byReplica[to]++;
      }
      await everyReplicaCounts(admitted * BLOCKS_PER_REQUEST, replicas);
    }
    expect(admitted).toBe(ROOM);
    for (const fe of replicas) expect(await rank(fe)).toMatchObject({ busy: true });

    // The last replica is killed: its requests stop holding anything on the others once its
    // reservations expire (--reservation-share-ttl-ms after its last message).
    const killed = replicas[REPLICAS - 1];
    const survivors = replicas.slice(0, REPLICAS - 1);
    killed.proc.kill('SIGKILL');
    await killed.proc.exited;
    const left = (admitted - byReplica[REPLICAS - 1]) * BLOCKS_PER_REQUEST;
    await everyReplicaCounts(left, survivors);
    for (const fe of survivors) expect(await rank(fe)).toMatchObject({ busy: false });
    expect(await send(survivors[0])).toBe(true);
    await everyReplicaCounts(left + BLOCKS_PER_REQUEST, survivors);

    // A report measured now that holds what is in flight takes every reservation back, the
    // shared ones too (each replica withdraws what the report covers). Streamed requests count
    // until their status line came, so the report waits for every first token.
    await waitFor(
      async () => (await Promise.all(survivors.map(inflight))).every((n) => n > 0),
      'requests in flight on the survivors',
      SETTLED_MS,
    );
    await waitForFirstTokens(survivors);
    await report(left + BLOCKS_PER_REQUEST, survivors);
    await everyReplicaCounts(0, survivors);
    for (const c of open.splice(0)) c.abort();
    await Promise.all(survivors.map((fe) => fe.proc.stop()));
  }, 300_000);

  it('without sharing (--reservation-share-interval-ms 0), lets each replica fill the room on its own: three times as far', async () => {
    const replicas = await startReplicas(['--reservation-share-interval-ms', '0']);
    await report(0, replicas);
    let admitted = 0;
    for (let i = 0; i < BURST; i++) if (await send(replicas[i % REPLICAS])) admitted++;
    expect(admitted).toBe(REPLICAS * ROOM);
    for (const fe of replicas) expect(await rank(fe)).toMatchObject({ shared_decode_blocks: 0 });
  }, 300_000);

  /** Every admitted request's first token came: none of their prompts is reserved any more. */
  async function waitForFirstTokens(among: FrontendProcess[]): Promise<void> {
    for (const fe of among) {
      await waitFor(
        async () => (await rank(fe))?.reserved_prefill_tokens === 0,
        `every request through ${fe.url} answered its first token`,
        SETTLED_MS,
      );
    }
  }
});
