/**
 * Open-loop client at a fixed arrival rate (no coordinated omission: latency is measured from
 * each request's scheduled send time), with microsecond resolution — autocannon's latency
 * histogram only resolves whole milliseconds. Prints one JSON line on stdout.
 *
 *   node dist/bench/tools/fixed-rate.js URL RATE DURATION_S BODY [CONNECTIONS]
 */
import { Pool } from 'undici';
import type { FixedRateResult } from '../lib/fixed-rate';

function pct(sorted: Float64Array, p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return Math.round(sorted[rank - 1]);
}

async function main(): Promise<void> {
  const [url, rateArg, durationArg, body, connArg] = process.argv.slice(2);
  const rate = Number(rateArg);
  const durationS = Number(durationArg);
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: Number(connArg ?? 64), pipelining: 1 });
  const total = Math.max(1, Math.round(rate * durationS));
  const latencies = new Float64Array(total);
  const statuses: Record<string, number> = {};
  let done = 0;
  let errors = 0;
  let sent = 0;
  let maxLag = 0;
  const t0 = process.hrtime.bigint();
  const elapsedUs = (): number => Number(process.hrtime.bigint() - t0) / 1000;

  const fire = (i: number, scheduledUs: number): void => {
    pool
      .request({
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      .then(async (res) => {
        await res.body.dump();
        latencies[i] = elapsedUs() - scheduledUs;
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      })
      .catch(() => {
        latencies[i] = NaN;
        errors++;
      })
      .finally(() => {
        done++;
      });
  };

  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = elapsedUs();
      while (sent < total && (sent * 1e6) / rate <= now) {
        const scheduled = (sent * 1e6) / rate;
        maxLag = Math.max(maxLag, now - scheduled);
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
  await pool.destroy();
  const ok = Float64Array.from(
    latencies.subarray(0, sent).filter((x) => Number.isFinite(x) && x > 0),
  );
  ok.sort();
  const out: FixedRateResult = {
    sent,
    statuses,
    errors: errors + (sent - done),
    p50_us: pct(ok, 50),
    p90_us: pct(ok, 90),
    p99_us: pct(ok, 99),
    max_us: ok.length ? Math.round(ok[ok.length - 1]) : null,
    max_send_lag_us: Math.round(maxLag),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main();
