/**
 * A lightweight stand-in for a large fleet: publishes contract §4 load reports for W workers ×
 * R data-parallel ranks over a few NATS connections, at a paced aggregate rate. Driven by JSON
 * lines on stdin, answers with JSON lines on stdout:
 *
 *   {"cmd":"flood","rate":50000,"durationS":8}  → {"event":"flood-done","sent":…,"startMs":…,"sentinelMs":…}
 *   {"cmd":"steady","rate":8000}                → publishes until {"cmd":"stop"} → {"event":"stopped","sent":…}
 *   {"cmd":"quit"}
 *
 * At the end of a flood every connection sends one report marking its rank of the sentinel
 * worker busy: NATS keeps each connection's order, so when the frontend rejects the sentinel's
 * model it has processed everything sent before.
 *
 *   node dist/bench/tools/report-flood.js NATS_URL NAMESPACE ENDPOINT WORKERS RANKS CONNECTIONS MODE
 *   MODE: busy (every flood rank over 0.85) | mixed (half the workers busy, half free)
 */
import { connect, NatsConnection } from 'nats';
import { createInterface } from 'node:readline';

import { FLOOD_MODEL, SENTINEL_MODEL, SENTINEL_WORKER } from '../lib/flood-names';
const VARIANTS = 4;
const TICK_MS = 2;

const [natsUrl, namespace, endpoint, workersArg, ranksArg, connArg, mode] = process.argv.slice(2);
const workers = Number(workersArg);
const ranks = Number(ranksArg);
const subject = `namespace.${namespace}.kv_metrics`;
const enc = new TextEncoder();

/** Pre-encoded payloads (no JSON work while flooding): [variant][worker × rank]. */
function payloads(): Uint8Array[][] {
  const out: Uint8Array[][] = [];
  for (let v = 0; v < VARIANTS; v++) {
    const list: Uint8Array[] = [];
    for (let w = 0; w < workers; w++) {
      const busy = mode === 'busy' || w % 2 === 0;
      for (let r = 0; r < ranks; r++) {
        const decode = busy
          ? 900 + ((w * 7 + r * 13 + v * 17) % 99)
          : 100 + ((w + r + v * 31) % 400);
        list.push(
          enc.encode(
            JSON.stringify({
              worker_id: `flood-${String(w).padStart(5, '0')}`,
              model: FLOOD_MODEL,
              endpoint,
              dp_rank: r,
              dp_size: ranks,
              active_decode_blocks: decode,
              kv_total_blocks: 1000,
              active_prefill_tokens: (v * 97 + w) % 4096,
              max_num_batched_tokens: 8192,
            }),
          ),
        );
      }
    }
    out.push(list);
  }
  return out;
}

const say = (o: object): void => void process.stdout.write(`${JSON.stringify(o)}\n`);

async function main(): Promise<void> {
  const conns: NatsConnection[] = [];
  for (let i = 0; i < Number(connArg); i++)
    conns.push(await connect({ servers: natsUrl, name: `bench-flood-${i}` }));
  const data = payloads();
  say({ event: 'ready' });
  const perRound = workers * ranks;
  let cursor = 0;
  let running: { stop: boolean } | null = null;

  /** Publishes at `rate` until `until()` says stop; returns the count sent and the worst backlog. */
  const pace = async (
    rate: number,
    until: () => boolean,
  ): Promise<{ sent: number; behindMax: number; startMs: number }> => {
    const startMs = Date.now();
    let sent = 0;
    let behindMax = 0;
    while (!until()) {
      const due = Math.floor(((Date.now() - startMs) * rate) / 1000);
      // Bound one tick's burst so a stall does not turn into one giant write.
      const n = Math.min(due - sent, Math.ceil(rate / 50));
      behindMax = Math.max(behindMax, due - sent - n);
      for (let i = 0; i < n; i++) {
        const k = cursor++;
        const v = Math.floor(k / perRound) % VARIANTS;
        conns[k % conns.length].publish(subject, data[v][k % perRound]);
      }
      sent += Math.max(0, n);
      await new Promise((r) => setTimeout(r, TICK_MS));
    }
    return { sent, behindMax, startMs };
  };

  const sentinel = (): number => {
    const at = Date.now();
    conns.forEach((nc, rank) =>
      nc.publish(
        subject,
        enc.encode(
          JSON.stringify({
            worker_id: SENTINEL_WORKER,
            model: SENTINEL_MODEL,
            endpoint,
            dp_rank: rank,
            dp_size: conns.length,
            active_decode_blocks: 99,
            kv_total_blocks: 100,
            active_prefill_tokens: 0,
          }),
        ),
      ),
    );
    return at;
  };

  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const cmd = JSON.parse(line) as { cmd: string; rate?: number; durationS?: number };
    if (cmd.cmd === 'flood') {
      const end = Date.now() + (cmd.durationS ?? 1) * 1000;
      const r = await pace(cmd.rate ?? 1000, () => Date.now() >= end);
      const sentinelMs = sentinel();
      await Promise.all(conns.map((nc) => nc.flush()));
      say({
        event: 'flood-done',
        sent: r.sent,
        startMs: r.startMs,
        endMs: sentinelMs,
        sentinelMs,
        behindMax: r.behindMax,
      });
    } else if (cmd.cmd === 'steady') {
      const state = { stop: false };
      running = state;
      void pace(cmd.rate ?? 1000, () => state.stop).then((r) =>
        say({ event: 'stopped', sent: r.sent, startMs: r.startMs }),
      );
      say({ event: 'steady-started' });
    } else if (cmd.cmd === 'stop') {
      if (running) running.stop = true;
    } else if (cmd.cmd === 'quit') {
      break;
    }
  }
  await Promise.all(conns.map((nc) => nc.drain()));
  process.exit(0);
}

void main();
