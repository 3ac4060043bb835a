/**
 * Closed-loop capacity probe: N clients each send the same kind of request as loadgen (its
 * prompt builder and request sender), back to back, for D seconds; prints the completions per
 * second inside [WARMUP, D] as one JSON line. The clients start spread over RAMP_S seconds: all
 * starting at once, they finish in waves, and a window then catches a wave or a trough.
 *
 *   node .bench/bench/tools/closed-loop.js CONCURRENCY WARMUP_S RAMP_S [loadgen flags ...]
 */
import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';
import { parseLoadgenArgs } from '../../apps/loadgen/src/loadgen.options';
import { RequestSender } from '../../apps/loadgen/src/request.sender';

async function main(): Promise<void> {
  const concurrency = Number(process.argv[2]);
  const warmupS = Number(process.argv[3]);
  const rampS = Number(process.argv[4]);
  const cmd = parseLoadgenArgs(process.argv.slice(5));
  if (cmd.kind !== 'run') throw new Error('expected loadgen flags');
  const o = cmd.options;
  const pool = new Pool(o.url.origin, {
    connections: concurrency,
    pipelining: 1,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  const sender = new RequestSender(pool, o, abort.signal);
  const t0 = performance.now();
  const end = t0 + o.durationS * 1000;
  const from = t0 + warmupS * 1000;
  let inWindow = 0;
  let errors = 0;
  let index = 0;
  const kinds: Record<string, number> = {};
  const loop = async (i: number): Promise<void> => {
    await new Promise((r) => setTimeout(r, (i * rampS * 1000) / concurrency));
    while (performance.now() < end) {
      const r = await sender.send(index++);
      const t = performance.now();
      kinds[r.kind] = (kinds[r.kind] ?? 0) + 1;
      if (r.kind === 'ok' && t >= from && t < end) inWindow++;
      if (r.kind === 'error') errors++;
    }
  };
  const loops = Array.from({ length: concurrency }, (_, i) => loop(i));
  await new Promise((r) => setTimeout(r, end - performance.now() + 10));
  abort.abort();
  await Promise.race([Promise.allSettled(loops), new Promise((r) => setTimeout(r, 5000))]);
  await pool.destroy();
  const rps = inWindow / ((end - from) / 1000);
  process.stdout.write(
    `${JSON.stringify({ rps, completed_in_window: inWindow, errors, kinds })}\n`,
  );
}

void main();
