import { fmt, median } from '../lib/util';
import {
  admitted,
  bRefused,
  FAIR_SHARE_FLAGS,
  LOAD,
  Pair,
  PointId,
  POINTS,
  QUEUE_DEPTH,
  QUEUE_TIMEOUT_MS,
  Run,
  WEIGHTED,
} from './tenants';

/** A function, not a constant: this module and ./tenants import each other. */
const names = (): Record<PointId, string> => ({
  equal: `A ${LOAD.heavy}× (weight 1) + B ${LOAD.light}× (weight 1)`,
  none: `${LOAD.heavy}× + ${LOAD.light}×, no keys (one tenant)`,
  alone: `B ${LOAD.light}× alone`,
  weighted: `A ${LOAD.weighted}× (weight ${WEIGHTED}) + B ${LOAD.weighted}× (weight 1)`,
  floor: `A ${LOAD.floor}× + B ${LOAD.light}×, no keys, frontend without shedding`,
});

/** The method, and per point the medians over the rounds (B's refused share of each round). */
export function tenantsDetails(pairs: Pair[], run: Run): string {
  const flags = FAIR_SHARE_FLAGS.filter((f) => !f.startsWith('ops:') && f !== '--admin-token');
  const NAMES = names();
  const rows = POINTS.filter((p) => pairs.some((x) => x.point === p)).map((p) => {
    const xs = pairs.filter((x) => x.point === p);
    const med = (f: (x: Pair) => number | null | undefined): string =>
      fmt(median(xs.map((x) => f(x) ?? NaN)));
    const share = (x: Pair): number =>
      x.a ? (100 * admitted(x.a)) / (admitted(x.a) + admitted(x.b)) : NaN;
    const spread = xs.map((x) => bRefused(x).toFixed(2)).join(', ');
    return (
      `| ${NAMES[p]} | ${med((x) => (x.a ? 100 * x.a.rejection_ratio : NaN))} | ` +
      `${med(bRefused)} (${spread}) | ${med((x) => x.a?.goodput_rps)} | ` +
      `${med((x) => x.b.goodput_rps)} | ${med(share)} | ${med((x) => x.a?.ttft_p99_ms)} | ` +
      `${med((x) => x.b.ttft_p99_ms)} | ${med((x) => (x.a?.window_aborted ?? 0) + x.b.window_aborted)} |`
    );
  });
  return [
    'The goodput scenario’s two simulated workers (`--speedup 1`) on CPU 1, before one frontend',
    `on CPU 0 with tenants and the product's default admission (\`${flags.join(' ')}\`): while`,
    'every worker is busy, a request of a tenant under its weighted share of the requests held',
    'goes to a worker not busy at the critical thresholds (×1.2) or, when there is none,',
    `waits in the router queue (at most ${QUEUE_DEPTH}, at most ${QUEUE_TIMEOUT_MS / 1000} s) for the first worker that frees;`,
    'the others are refused at once (decisions 0225, 0230). Tenants are created',
    'through `/tenants` with their weights and one key each; a second frontend without shedding',
    'measures capacity as in the goodput scenario and takes the point *floor* (A and B without',
    `keys, ${fmt(LOAD.floor + LOAD.light)}× capacity in total, nothing refused: B's TTFT there is the least any admission`,
    'policy can give B while the fleet serves that much); each frontend is stopped (SIGSTOP) during',
    'the points of the other. Each point runs',
    'one open-loop client per tenant at once (bench/tools/goodput-client with `--bearer` the',
    'tenant’s key; without keys every request is the tenant `default`), the same streaming chat',
    `requests of ~1,000 prompt tokens and \`max_tokens\` 64. *Capacity*: ${fmt(run.capacity)} req/s${run.nominal ? ' (nominal: a quick run, not measured)' : ''}. Each`,
    `point sends for ${run.durationS} s; its figures are of the requests that arrived in [${run.warmupS} s, ${run.durationS} s);`,
    `answers are awaited ${run.drainS} s after the last arrival, the rest cut off. *Admitted*: not refused.`,
    `Points interleaved, ${run.rounds} round(s); medians over the rounds, B's refused share of each round`,
    'in brackets.',
    '',
    '| point | A refused % | B refused % (rounds) | A succeeded req/s | B succeeded req/s | A share of admitted % | A TTFT p99 ms | B TTFT p99 ms | cut off |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}
