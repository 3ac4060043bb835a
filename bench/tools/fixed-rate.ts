/**
 * Open-loop client at a fixed arrival rate (no coordinated omission: latency is measured from
 * each request's scheduled send time), with microsecond resolution — autocannon's latency
 * histogram only resolves whole milliseconds. Prints one JSON line on stdout.
 *
 *   node .bench/bench/tools/fixed-rate.js URL RATE DURATION_S BODY [CONNECTIONS] [WARMUP_S] [HEADERS]
 *
 * HEADERS (default `{}`): a JSON object of request headers sent besides `content-type`.
 *
 * WARMUP_S (default 0): the same traffic is sent for this long first and not recorded, so the
 * figures are of the steady state rather than of this client opening its connections and
 * compiling its own code (at 5,000 req/s a 50 ms hiccup of the client's first second alone is
 * 250 late answers: the whole p99 of a 5 s run).
 */
import { Pool } from 'undici';
import type { FixedRateResult } from '../lib/fixed-rate';

function pct(sorted: Float64Array, p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return Math.round(sorted[rank - 1]);
}

async function main(): Promise<void> {
  const [url, rateArg, durationArg, body, connArg, warmupArg, headersArg] = process.argv.slice(2);
  const rate = Number(rateArg);
  const durationS = Number(durationArg);
  const warmup = Math.round(rate * Number(warmupArg ?? 0));
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: Number(connArg ?? 64), pipelining: 1 });
  const total = warmup + Math.max(1, Math.round(rate * durationS));
  const latencies = new Float64Array(total);
  const statuses: Record<string, number> = {};
  let done = 0;
  let errors = 0;
  let sent = 0;
  let maxLag = 0;
  const t0 = process.hrtime.bigint();
  let cpuFrom = process.cpuUsage();
  const elapsedUs = (): number => Number(process.hrtime.bigint() - t0) / 1000;

  const path = target.pathname;
  const headers = {
    'content-type': 'application/json',
    ...(JSON.parse(headersArg ?? '{}') as Record<string, string>),
  };
  // undici's dispatch with a bare handler: no promise, response object or body stream per
  // request, so this client takes as little of its core (shared with the worker in the admitted scenario)
  // as it can, and its own turns add as little as they can to the latencies it measures.
  const fire = (i: number, scheduledUs: number): void => {
    let status = 0;
    pool.dispatch(
      { path, method: 'POST', headers, body },
      {
        // undici takes a handler of this (non-deprecated) form by its onRequestStart.
        onRequestStart(): void {},
        onResponseStart(_controller, statusCode): void {
          status = statusCode;
        },
        onResponseData(): void {},
        onResponseEnd(): void {
          latencies[i] = elapsedUs() - scheduledUs;
          if (i >= warmup) statuses[status] = (statuses[status] ?? 0) + 1;
          done++;
        },
        onResponseError(): void {
          latencies[i] = NaN;
          if (i >= warmup) errors++;
          done++;
        },
      },
    );
  };

  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = elapsedUs();
      while (sent < total && (sent * 1e6) / rate <= now) {
        if (sent === warmup) cpuFrom = process.cpuUsage();
        const scheduled = (sent * 1e6) / rate;
        if (sent >= warmup) maxLag = Math.max(maxLag, now - scheduled);
        fire(sent, scheduled);
        sent++;
      }
      if (sent < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  const deadline = Date.now() + 30000;
  while (done < sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const cpu = process.cpuUsage(cpuFrom);
  await pool.destroy();
  const ok = Float64Array.from(
    latencies.subarray(warmup, sent).filter((x) => Number.isFinite(x) && x > 0),
  );
  ok.sort();
  const out: FixedRateResult = {
    sent: sent - warmup,
    statuses,
    errors: errors + Math.max(0, sent - done),
    p50_us: pct(ok, 50),
    p90_us: pct(ok, 90),
    p99_us: pct(ok, 99),
    max_us: ok.length ? Math.round(ok[ok.length - 1]) : null,
    max_send_lag_us: Math.round(maxLag),
    client_cpu_us_per_request: Math.round((cpu.user + cpu.system) / Math.max(1, sent - warmup)),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main();
