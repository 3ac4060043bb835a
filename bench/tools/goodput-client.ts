/**
 * The project's loadgen (same arrival schedule, prompts, request sender and SSE accounting,
 * imported from apps/loadgen) with one addition scenario 7 needs: per-request timestamps, so
 * goodput and latencies can be taken over a steady-state window that leaves out the cold start
 * and the drain. Prints one JSON line.
 *
 *   node dist/bench/tools/goodput-client.js WARMUP_S [loadgen flags: --url --rate --duration ...]
 */
import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';
import { realClock, runArrivalSchedule } from '../../apps/loadgen/src/arrival.schedule';
import { parseLoadgenArgs } from '../../apps/loadgen/src/loadgen.options';
import { RequestSender } from '../../apps/loadgen/src/request.sender';
import { RequestOutcome } from '../../apps/loadgen/src/response.classifier';

interface Rec {
  at: number;
  end: number;
  outcome: RequestOutcome;
}

function pct(xs: number[], p: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length))) - 1];
}

async function main(): Promise<void> {
  const warmupS = Number(process.argv[2]);
  const cmd = parseLoadgenArgs(process.argv.slice(3));
  if (cmd.kind !== 'run') throw new Error('expected loadgen flags');
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
  const sender = new RequestSender(pool, o, abort.signal);
  const recs: Rec[] = [];
  const pending = new Set<Promise<void>>();
  const t0 = realClock.now();
  await runArrivalSchedule({
    rate: o.rate,
    durationS: o.durationS,
    t0,
    clock: realClock,
    onArrival: (index) => {
      const at = realClock.now() - t0;
      const p = sender
        .send(index)
        .then((outcome) => void recs.push({ at, end: realClock.now() - t0, outcome }))
        .finally(() => pending.delete(p));
      pending.add(p);
    },
  });
  const windowEnd = o.durationS * 1000;
  await realClock.sleep(t0 + windowEnd - realClock.now());
  // Drain: wait for answers up to the timeout, then abort the rest (their KV is freed).
  const drained = await Promise.race([
    Promise.all([...pending]).then(() => true),
    realClock.sleep(o.drainTimeoutS * 1000).then(() => false),
  ]);
  const abortAt = realClock.now() - t0;
  if (!drained) abort.abort();
  await Promise.race([Promise.all([...pending]), realClock.sleep(5000)]);
  await pool.destroy();

  const from = warmupS * 1000;
  const inWindow = recs.filter((r) => r.at >= from && r.at < windowEnd);
  const ok = inWindow.filter((r) => r.outcome.kind === 'ok');
  const okTtft = ok.map((r) => (r.outcome.kind === 'ok' ? r.outcome.ttftMs : 0));
  // Requests cut off by the drain timeout never got a first token: their TTFT is at least the
  // time they waited, so they enter the TTFT percentiles as lower bounds (censored values).
  const cut = inWindow.filter((r) => r.outcome.kind === 'aborted');
  const ttftWithCut = [...okTtft, ...cut.map((r) => abortAt - r.at)];
  const count = (k: RequestOutcome['kind']): number =>
    inWindow.filter((r) => r.outcome.kind === k).length;
  const completedOk = recs.filter(
    (r) => r.outcome.kind === 'ok' && r.end >= from && r.end < windowEnd,
  ).length;
  const out = {
    rate: o.rate,
    duration_s: o.durationS,
    warmup_s: warmupS,
    arrivals_total: recs.length,
    window_arrivals: inWindow.length,
    window_ok: ok.length,
    window_rejected: count('rejected'),
    window_errors: count('error'),
    window_aborted: cut.length,
    error_kinds: [
      ...new Set(inWindow.flatMap((r) => (r.outcome.kind === 'error' ? [r.outcome.label] : []))),
    ],
    /** Successful completions per second inside the window (steady-state goodput). */
    goodput_rps: completedOk / ((windowEnd - from) / 1000),
    rejection_ratio: inWindow.length ? count('rejected') / inWindow.length : 0,
    ttft_p50_ms: pct(okTtft, 50),
    ttft_p99_ms: pct(okTtft, 99),
    ttft_p99_with_cut_ms: pct(ttftWithCut, 99),
    latency_p50_ms: pct(
      ok.map((r) => (r.outcome.kind === 'ok' ? r.outcome.latencyMs : 0)),
      50,
    ),
    latency_p99_ms: pct(
      ok.map((r) => (r.outcome.kind === 'ok' ? r.outcome.latencyMs : 0)),
      99,
    ),
    all_ok: recs.filter((r) => r.outcome.kind === 'ok').length,
    all_rejected: recs.filter((r) => r.outcome.kind === 'rejected').length,
    all_aborted: recs.filter((r) => r.outcome.kind === 'aborted').length,
    all_ttft_p99_ms: pct(
      recs.flatMap((r) => (r.outcome.kind === 'ok' ? [r.outcome.ttftMs] : [])),
      99,
    ),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main();
