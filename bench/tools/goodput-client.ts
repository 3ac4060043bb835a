/**
 * The project's loadgen (same arrival schedule, prompts, SSE reader and answer classification,
 * imported from apps/loadgen) with what the goodput scenarios need on top: per-request timestamps, so
 * goodput and latencies can be taken over a steady-state window that leaves out the cold start
 * and the drain, and the time to first token of requests that were still streaming (or still
 * waiting) when the drain timeout cut them off. Prints one JSON line.
 *
 *   node .bench/bench/tools/goodput-client.js WARMUP_S MIX OBJECTIVE_MS [--bearer KEY] [loadgen flags: --url --rate --duration ...]
 *
 * Every figure is of the requests that *arrived* in the window [WARMUP_S, duration), whenever
 * they ended: goodput is how many of those succeeded, per second of the window (a request that
 * arrived in the window and succeeded during the drain counts; one that arrived before the
 * window and ended in it does not).
 *
 * OBJECTIVE_MS (`-` for none): the TTFT objective the figures are judged against. An admitted
 * request *meets* it when its first token came within it (a request cut off by the drain timeout
 * after its first token counts by that token); `goodput_slo_rps` counts the requests of the window
 * that succeeded with their first token within it.
 *
 * MIX: `-` sends no priority header; `critical=0.5,sheddable=0.5` sends `x-sluice-priority` with
 * those shares (assigned by arrival index from a fixed low-discrepancy sequence, so every run
 * sends the same classes in the same order) and reports each class's figures too, and how many
 * requests of a lower class were admitted in a second of the window in which a critical request
 * arrived that was refused (`lower_admitted_while_critical_refused`).
 *
 * `--bearer KEY` sends `Authorization: Bearer KEY` on every request (a tenant's key).
 */
import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';
import { realClock, runArrivalSchedule } from '../../apps/loadgen/src/arrival.schedule';
import { LoadgenOptions, parseLoadgenArgs } from '../../apps/loadgen/src/loadgen.options';
import { buildRequestBody, requestPath } from '../../apps/loadgen/src/prompt.builder';
import { classifyErrorResponse } from '../../apps/loadgen/src/response.classifier';
import { OpenAiStreamReader } from '../../apps/loadgen/src/sse-stream.parser';
import type { PointResult } from '../lib/goodput';

type Kind = 'ok' | 'rejected' | 'error' | 'aborted';

interface Rec {
  /** Arrival, ms after the start. */
  at: number;
  /** Settled, ms after the start. */
  end: number;
  kind: Kind;
  /** Time to first token; for an aborted request only if its first token had arrived. */
  ttftMs: number | null;
  latencyMs: number | null;
  label?: string;
  priority?: string;
}

type Mix = Array<[cls: string, share: number]>;

function parseMix(arg: string): Mix {
  if (arg === '-') return [];
  const mix = arg.split(',').map((part): [string, number] => {
    const [cls, share] = part.split('=');
    const v = Number(share);
    if (!cls || !(v > 0)) throw new Error(`bad priority mix part "${part}"`);
    return [cls, v];
  });
  const total = mix.reduce((a, [, v]) => a + v, 0);
  return mix.map(([c, v]) => [c, v / total]);
}

/** The class of arrival `index`: the golden-ratio sequence walks the cumulative shares evenly. */
function classOf(mix: Mix, index: number): string | undefined {
  if (mix.length === 0) return undefined;
  const u = ((index + 1) * 0.6180339887498949) % 1;
  let acc = 0;
  for (const [cls, share] of mix) {
    acc += share;
    if (u < acc) return cls;
  }
  return mix[mix.length - 1][0];
}

function pct(xs: number[], p: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length))) - 1];
}

/** Sends one streaming request and reads it to the end, keeping its first-token time. */
async function send(
  pool: Pool,
  o: LoadgenOptions,
  index: number,
  signal: AbortSignal,
  t0: number,
  priority: string | undefined,
  auth: Record<string, string>,
): Promise<Rec> {
  const at = realClock.now() - t0;
  const start = performance.now();
  const reader = new OpenAiStreamReader();
  const done = (kind: Kind, extra: Partial<Rec> = {}): Rec => ({
    at,
    end: realClock.now() - t0,
    kind,
    ttftMs: reader.firstDataAtMs === null ? null : reader.firstDataAtMs - start,
    latencyMs: performance.now() - start,
    priority,
    ...extra,
  });
  try {
    const res = await pool.request({
      path: requestPath(o),
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...auth,
        ...(priority ? { 'x-sluice-priority': priority } : {}),
      },
      body: buildRequestBody(o, index),
      signal,
    });
    if (res.statusCode !== 200) {
      const outcome = classifyErrorResponse(
        res.statusCode,
        await res.body.text(),
        performance.now() - start,
      );
      return done(outcome.kind === 'rejected' ? 'rejected' : 'error', {
        label: outcome.kind === 'error' ? outcome.label : undefined,
      });
    }
    const decoder = new TextDecoder();
    for await (const chunk of res.body as AsyncIterable<Buffer>)
      reader.push(decoder.decode(chunk, { stream: true }), performance.now());
    reader.push(decoder.decode(), performance.now());
    reader.end(performance.now());
    if (reader.failed || !reader.done || reader.firstDataAtMs === null)
      return done('error', { label: 'stream_incomplete' });
    return done('ok');
  } catch (err) {
    if (signal.aborted) return done('aborted');
    return done('error', { label: err instanceof Error ? err.name : 'error' });
  }
}

/**
 * Waits for `p` at most `ms`; true if it settled in time. The timer is cleared either way: a
 * pending drain timer would keep the process (and the point) alive for the whole timeout.
 */
async function within(ms: number, p: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<void> {
  const warmupS = Number(process.argv[2]);
  const mix = parseMix(process.argv[3]);
  const objectiveMs = process.argv[4] === '-' ? null : Number(process.argv[4]);
  if (objectiveMs !== null && !(objectiveMs > 0))
    throw new Error(`bad objective "${process.argv[4]}"`);
  const rest = process.argv.slice(5);
  const bearerAt = rest.indexOf('--bearer');
  const auth: Record<string, string> =
    bearerAt < 0 ? {} : { authorization: `Bearer ${rest.splice(bearerAt, 2)[1]}` };
  const cmd = parseLoadgenArgs(rest);
  if (cmd.kind !== 'run' || !cmd.options.stream)
    throw new Error('expected loadgen flags with --stream');
  const o = cmd.options;
  const pool = new Pool(o.url.origin, {
    connections: o.maxInflight,
    pipelining: 1,
    keepAliveTimeout: 30000,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  const recs: Rec[] = [];
  const pending = new Set<Promise<void>>();
  const t0 = realClock.now();
  await runArrivalSchedule({
    rate: o.rate,
    durationS: o.durationS,
    t0,
    clock: realClock,
    onArrival: (index) => {
      const p = send(pool, o, index, abort.signal, t0, classOf(mix, index), auth)
        .then((r) => void recs.push(r))
        .finally(() => pending.delete(p));
      pending.add(p);
    },
  });
  const windowEnd = o.durationS * 1000;
  await realClock.sleep(t0 + windowEnd - realClock.now());
  // Drain: wait for answers up to the timeout, then abort the rest (their KV is freed).
  const drained = await within(o.drainTimeoutS * 1000, Promise.all([...pending]));
  const abortAt = realClock.now() - t0;
  if (!drained) abort.abort();
  await within(5000, Promise.all([...pending]));
  await pool.destroy();

  const from = warmupS * 1000;
  const inWindow = recs.filter((r) => r.at >= from && r.at < windowEnd);
  const count = (k: Kind): number => inWindow.filter((r) => r.kind === k).length;
  const ok = inWindow.filter((r) => r.kind === 'ok');
  const cut = inWindow.filter((r) => r.kind === 'aborted');
  // Every admitted request of the window: the successful ones, and the ones the drain timeout
  // cut off (with their real first-token time if it came, else a lower bound: the wait so far).
  const admittedTtft = [
    ...ok.map((r) => r.ttftMs as number),
    ...cut.map((r) => r.ttftMs ?? abortAt - r.at),
  ];
  const windowS = (windowEnd - from) / 1000;
  const slo = objectiveMs ?? Infinity;
  const metSlo = (r: Rec): boolean => r.ttftMs !== null && r.ttftMs <= slo;
  const goodSlo = (rs: Rec[]): number => rs.filter((r) => r.kind === 'ok' && metSlo(r)).length;
  // Admitted: every request of the window that was not refused (errors count, as misses).
  const admitted = inWindow.filter((r) => r.kind !== 'rejected');
  const classes = Object.fromEntries(
    mix.map(([cls]) => {
      const mine = inWindow.filter((r) => r.priority === cls);
      const rejected = mine.filter((r) => r.kind === 'rejected').length;
      const okN = mine.filter((r) => r.kind === 'ok').length;
      return [
        cls,
        {
          arrivals: mine.length,
          ok: okN,
          rejected,
          rejection_ratio: mine.length ? rejected / mine.length : 0,
          goodput_rps: okN / windowS,
          goodput_slo_rps: goodSlo(mine) / windowS,
        },
      ];
    }),
  );
  // Seconds (of arrival) in which a critical request was refused.
  const refusedSeconds = new Set(
    inWindow
      .filter((r) => r.priority === 'critical' && r.kind === 'rejected')
      .map((r) => Math.floor(r.at / 1000)),
  );
  const lowerAdmitted = inWindow.filter(
    (r) =>
      r.priority !== undefined &&
      r.priority !== 'critical' &&
      r.kind !== 'rejected' &&
      refusedSeconds.has(Math.floor(r.at / 1000)),
  ).length;
  const latencies = ok.map((r) => r.latencyMs as number);
  const out: PointResult & { error_kinds: string[] } = {
    window_arrivals: inWindow.length,
    window_ok: ok.length,
    window_rejected: count('rejected'),
    window_errors: count('error'),
    window_aborted: cut.length,
    error_kinds: [...new Set(inWindow.flatMap((r) => (r.label ? [r.label] : [])))],
    goodput_rps: ok.length / windowS,
    goodput_slo_rps: goodSlo(inWindow) / windowS,
    rejection_ratio: inWindow.length ? count('rejected') / inWindow.length : 0,
    admitted_met_share: admitted.length ? admitted.filter(metSlo).length / admitted.length : null,
    ttft_p50_ms: pct(admittedTtft, 50),
    ttft_p99_ms: pct(admittedTtft, 99),
    latency_p50_ms: pct(latencies, 50),
    latency_p99_ms: pct(latencies, 99),
    classes,
    lower_admitted_while_critical_refused: lowerAdmitted,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main();
