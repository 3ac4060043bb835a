import { ReportBus } from '../lib/bus';
import { BenchContext, CPU } from '../lib/context';
import { describeProcess, requireLikeForLike } from '../lib/processes';
import { atMost, figure, interleaved, Plan, Scenario, ScenarioResult } from '../lib/scenario';
import { startFrontend, Started, startWorker } from '../lib/sluice';
import { fmt, median, sleep, uniqueNamespace, waitFor } from '../lib/util';

/** A model of its own, so nothing of another scenario routes to its worker. */
const MODEL = 'bench/shared-reservations';
const KV_TOTAL = 100;
const THRESHOLD = 0.5;
/** "Hello there" is 3 tokens + 4 of chat framing; 7 + 153 = 160 tokens: 10 KV blocks of 16. */
const MAX_TOKENS = 153;
const BLOCKS_PER_REQUEST = 10;
const REPLICAS = 3;
/** Each replica gets more requests than the threshold's room (6 requests), so each alone fills it. */
const BURST = 24;
/** The burst spreads over this long: well inside a report interval (1 s and more). */
const SPACING_MS = 10;

type Subject = 'one replica' | 'shared' | 'not shared';
const SUBJECTS: Subject[] = ['one replica', 'shared', 'not shared'];

/**
 * Issue 42 item 3: a burst sent between two load reports through three frontend replicas. Blocks
 * admitted past the threshold with the replicas sharing their reservations over NATS, beside the
 * same burst through one replica and through three replicas that do not share.
 */
export const sharedReservationsScenario: Scenario = {
  id: 'shared-reservations',
  title: 'Overshoot of a burst spread over three frontend replicas',
  plan: (quick) => (quick ? { rounds: 2, seconds: 20 } : { rounds: 10, seconds: 77 }),
  async run(ctx: BenchContext, plan: Plan): Promise<ScenarioResult> {
    const g = ctx.group();
    const shared = await ReportBus.connect(ctx.natsUrl, uniqueNamespace('shares'));
    const apart = await ReportBus.connect(ctx.natsUrl, uniqueNamespace('apart'));
    const open: AbortController[] = [];
    try {
      // Slowed 500×: an admitted request holds its blocks for the whole round.
      const worker = await startWorker(g, ['--speedup', '0.002', '--model', MODEL], {
        cpu: CPU.client,
      });
      const flags = [
        ...['--admission-control', 'token-capacity'],
        ...['--active-decode-blocks-threshold', String(THRESHOLD)],
        ...['--worker-ttl-ms', '600000'],
      ];
      const start = (bus: ReportBus, extra: string[], i: number): Promise<Started> =>
        startFrontend(g, {
          ...{ natsUrl: ctx.natsUrl, databaseUrl: ctx.databaseUrl, namespace: bus.namespace },
          flags: [...flags, ...extra],
          name: `frontend-${bus.namespace}-${i}`,
          cpu: CPU.server,
        });
      const sets = {
        shared: await Promise.all([...Array(REPLICAS).keys()].map((i) => start(shared, [], i))),
        apart: await Promise.all(
          [...Array(REPLICAS).keys()].map((i) =>
            start(apart, ['--reservation-share-interval-ms', '0'], i),
          ),
        ),
      };
      const processes = [
        describeProcess('frontend (shared)', sets.shared[0].proc.pid),
        describeProcess('frontend (not shared)', sets.apart[0].proc.pid),
      ];
      requireLikeForLike(processes);

      const overshoot: Record<Subject, number[]> = {
        'one replica': [],
        shared: [],
        'not shared': [],
      };
      let workerCount = 0;
      /** Blocks past the threshold in the warm-up round, on processes that served nothing yet. */
      const warm: Partial<Record<Subject, number>> = {};
      /** Per shared round: the closest two sends (ms), since a timer can fire late and bunch them. */
      const closest: number[] = [];
      ctx.log(`${plan.rounds} rounds of a ${BURST}-request burst, one every ${SPACING_MS} ms`);
      // Round 0 warms every subject up (the report's "the same warm-up for each") and is not
      // recorded: a replica's first requests run code not yet compiled, and a replica that takes
      // milliseconds longer to admit closes the gap to the next request on another replica.
      await interleaved(1 + plan.rounds, SUBJECTS, async (subject, round) => {
        const bus = subject === 'not shared' ? apart : shared;
        const replicas =
          subject === 'one replica'
            ? [sets.shared[0]]
            : subject === 'shared'
              ? sets.shared
              : sets.apart;
        const all = subject === 'not shared' ? sets.apart : sets.shared;
        // A worker of its own each time: nothing reserved on it before, idle by its report.
        const workerId = `burst-${++workerCount}`;
        bus.report({
          worker_id: workerId,
          model: MODEL,
          endpoint: worker.url,
          kv_total_blocks: KV_TOTAL,
          active_decode_blocks: 0,
        });
        for (const fe of all) await waitFor(() => knows(fe, workerId), `${workerId} known`);
        const statuses: Promise<number>[] = [];
        const sentAt: number[] = [];
        for (let i = 0; i < BURST; i++) {
          const c = new AbortController();
          open.push(c);
          sentAt.push(performance.now());
          statuses.push(send(replicas[i % replicas.length], c.signal));
          await sleep(SPACING_MS);
        }
        const warmUp = round === 0;
        if (subject === 'shared' && !warmUp) closest.push(closestGap(sentAt));
        const admitted = await waitFor(async () => {
          const inflight = (await Promise.all(all.map((fe) => inflightOn(fe, workerId)))).reduce(
            (a, b) => a + b,
            0,
          );
          const refused = (await settled(statuses)).filter((s) => s === 503).length;
          return inflight + refused === BURST && inflight;
        }, 'every request of the burst refused or in flight');
        const past = admitted * BLOCKS_PER_REQUEST - THRESHOLD * KV_TOTAL;
        if (warmUp) warm[subject] = past;
        else overshoot[subject].push(past);
        for (const c of open.splice(0)) c.abort();
        bus.nc.publish(
          `namespace.${bus.namespace}.worker_down`,
          new TextEncoder().encode(JSON.stringify({ worker_id: workerId })),
        );
      });
      const one = overshoot['one replica'];
      const ratio = (xs: number[]): number[] => xs.map((x, i) => x / one[i]);
      ctx.log(
        `overshoot, blocks: one ${fmt(median(one))}, shared ${fmt(median(overshoot.shared))}, ` +
          `not shared ${fmt(median(overshoot['not shared']))}`,
      );
      return {
        figures: [
          figure(
            'Overshoot with shared reservations ÷ one replica’s',
            '×',
            ratio(overshoot.shared),
            atMost(1.5),
          ),
          figure('Overshoot without sharing ÷ one replica’s', '×', ratio(overshoot['not shared'])),
          figure('Blocks admitted past the threshold, shared', 'blocks', overshoot.shared),
          figure(
            'Blocks admitted past the threshold, not shared',
            'blocks',
            overshoot['not shared'],
          ),
          figure('Blocks admitted past the threshold, one replica', 'blocks', one),
          figure('Closest two sends of a shared burst', 'ms', closest),
        ],
        details: [
          `One simulated worker of ${KV_TOTAL} KV blocks, slowed so that admitted requests hold their`,
          `blocks for the whole round; decode threshold ${THRESHOLD}; each streamed request reserves`,
          `${BLOCKS_PER_REQUEST} blocks. A round reports a fresh worker id as idle (one report, none`,
          `after it), then sends ${BURST} requests one every ${SPACING_MS} ms, round the replicas, and`,
          'counts what was admitted (in flight on the worker) past the threshold. Subjects, rotated',
          'each round: all of the burst through one replica; spread over three replicas sharing their',
          'reservations over NATS (default `--reservation-share-interval-ms 5`); spread over three',
          'replicas with `--reservation-share-interval-ms 0`. Frontends on CPU 0, the worker and the',
          'client on CPU 1. The ratios divide by the one-replica overshoot of the same round (the',
          'strict busy rule admits one request at exactly the threshold, so one replica overshoots',
          `by one request: ${BLOCKS_PER_REQUEST} blocks). A replica hears of another's reservation only`,
          "after the share's trip over NATS: two requests that reach two replicas closer together than",
          "that are both admitted. The closest two sends of each shared burst (the bench client's clock,",
          'before the request is written) show how well the client kept its spacing. Round 0 warms every',
          'subject up and is not recorded; on processes that had served nothing yet it admitted, past',
          `the threshold: ${SUBJECTS.map((x) => `${x} ${warm[x]} blocks`).join(', ')}.`,
        ].join('\n'),
        processes,
      };
    } finally {
      for (const c of open.splice(0)) c.abort();
      await shared.close();
      await apart.close();
      await g.stopAll();
    }
  },
};

interface StatusWorker {
  worker_id: string;
  inflight_requests: number;
}

async function workersOf(fe: Started): Promise<StatusWorker[]> {
  const status = (await (await fetch(`${fe.url}/ui/status.json`)).json()) as {
    models: Array<{ workers: StatusWorker[] }>;
  };
  return status.models.flatMap((m) => m.workers);
}

const knows = async (fe: Started, id: string): Promise<boolean> =>
  (await workersOf(fe)).some((w) => w.worker_id === id);

const inflightOn = async (fe: Started, id: string): Promise<number> =>
  (await workersOf(fe)).find((w) => w.worker_id === id)?.inflight_requests ?? 0;

/** A streamed chat request; its status (0 once aborted or failed). */
function send(fe: Started, signal: AbortSignal): Promise<number> {
  return fetch(`${fe.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there' }],
      max_tokens: MAX_TOKENS,
      stream: true,
    }),
    signal,
  }).then(
    async (res) => {
      if (res.status !== 200) await res.text();
      return res.status;
    },
    () => 0,
  );
}

/** The smallest gap (ms) between two consecutive times. */
function closestGap(times: number[]): number {
  let gap = Infinity;
  for (let i = 1; i < times.length; i++) gap = Math.min(gap, times[i] - times[i - 1]);
  return gap;
}

/** The statuses of the requests answered so far (a streamed 200 comes with its first token). */
async function settled(statuses: Promise<number>[]): Promise<number[]> {
  const pending = Symbol('pending');
  const now = await Promise.all(statuses.map((p) => Promise.race([p, Promise.resolve(pending)])));
  return now.filter((s): s is number => s !== pending);
}
