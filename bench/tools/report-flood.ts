/**
 * A lightweight stand-in for a large fleet: publishes load reports for WORKERS × RANKS
 * data-parallel ranks over a few NATS connections, RATE reports a second in all (WORKERS × RANKS
 * a second: every rank once a second), half the workers over 0.85 of their KV blocks and half
 * well under, the numbers changing from report to report. Prints `{"event":"ready"}` once
 * connected, publishes until SIGTERM, then prints `{"event":"stopped","sent":N,"seconds":S}`.
 *
 *   node .bench/bench/tools/report-flood.js NATS_URL NAMESPACE ENDPOINT MODEL WORKERS RANKS CONNECTIONS RATE
 */
import { connect } from 'nats';

const [natsUrl, namespace, endpoint, model, ...counts] = process.argv.slice(2);
const [workers, ranks, connections, rate] = counts.map(Number);
const VARIANTS = 4;
const TICK_MS = 2;

/** Pre-encoded reports (no JSON work while publishing): [variant][worker × rank]. */
function payloads(): Uint8Array[][] {
  const enc = new TextEncoder();
  return Array.from({ length: VARIANTS }, (_, v) =>
    Array.from({ length: workers * ranks }, (_, k) => {
      const [w, r] = [Math.floor(k / ranks), k % ranks];
      const decode =
        w % 2 === 0 ? 900 + ((w * 7 + r * 13 + v * 17) % 99) : 100 + ((w + r + v * 31) % 400);
      return enc.encode(
        JSON.stringify({
          worker_id: `flood-${String(w).padStart(5, '0')}`,
          model,
          endpoint,
          dp_rank: r,
          dp_size: ranks,
          active_decode_blocks: decode,
          kv_total_blocks: 1000,
          active_prefill_tokens: (v * 97 + w) % 4096,
          max_num_batched_tokens: 8192,
        }),
      );
    }),
  );
}

async function main(): Promise<void> {
  const conns = await Promise.all(
    Array.from({ length: connections }, (_, i) =>
      connect({ servers: natsUrl, name: `bench-flood-${i}` }),
    ),
  );
  const data = payloads();
  const subject = `namespace.${namespace}.kv_metrics`;
  const perRound = workers * ranks;
  let sent = 0;
  let stopping = false;
  process.once('SIGTERM', () => (stopping = true));
  process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`);
  const startMs = Date.now();
  while (!stopping) {
    const due = Math.floor(((Date.now() - startMs) * rate) / 1000);
    // One tick's burst is bounded, so that a stall does not turn into one giant write.
    const n = Math.min(due - sent, Math.ceil(rate / 50));
    for (let i = 0; i < n; i++, sent++) {
      const variant = Math.floor(sent / perRound) % VARIANTS;
      conns[sent % conns.length].publish(subject, data[variant][sent % perRound]);
    }
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  await Promise.all(conns.map((nc) => nc.drain()));
  const seconds = (Date.now() - startMs) / 1000;
  process.stdout.write(`${JSON.stringify({ event: 'stopped', sent, seconds })}\n`);
}

void main();
