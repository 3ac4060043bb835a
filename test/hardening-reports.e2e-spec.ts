import { useSystem } from './support/fixtures';
import { metricValue } from './support/http';
import { spawnApp, waitFor } from './support/processes';
import { memoryQuiet, rssMiB } from './support/proc';

/** Ranks the frontend may track; each flooded worker reports one rank of 1024. */
const MAX_RANKS = 20_000;
const FLOOD = 60_000;
const DP_SIZE = 1024;
/**
 * Generous: 20,000 tracked workers with one rank each cost a few tens of MB; the rest of the rise
 * is the flood's garbage, as much as V8 lets build up under HEAP_MB before it collects (peaks of
 * 168–249 MiB on this machine; 200 failed now and then). Storage sized by dp_size (1024 slots a
 * worker) would cost ~8 KiB a worker, about 470 MiB for the flood.
 */
const RSS_RISE_LIMIT_MIB = 300;
/** Capped, so V8 collects the flood's garbage instead of letting it inflate RSS. */
const HEAP_MB = 384;
const INVALID = 'dynamo_frontend_kv_metrics_invalid_total';
const REFUSED = 'sluice_frontend_kv_metrics_refused_total';

/**
 * Issue 11 item 3: the tracked-worker cap did not cap memory, because every worker allocated a
 * slot per dp_size rank. Tracking is capped by ranks reported (`--max-tracked-ranks`, here set
 * through its environment variable) and storage is sized by the ranks reported.
 */
describe('memory of load reports (dp_size 1024 flood)', () => {
  const sys = useSystem({
    bus: true,
    frontend: [
      '--active-decode-blocks-threshold',
      '0.9',
      // No worker expires during the flood, so the cap alone decides what is tracked.
      ...['--worker-ttl-ms', '600000'],
    ],
    env: {
      NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
      SLUICE_MAX_TRACKED_RANKS: String(MAX_RANKS),
    },
  });

  it('keeps RSS bounded and refuses (and counts) reports past the rank cap', async () => {
    const pid = sys.fe.proc.child.pid as number;
    // Out of the embedded database's start-up compiles first (`memoryQuiet`): on a frontend just
    // started on an existing database they would be charged to the flood.
    const quietAfterMs = await memoryQuiet(pid, { timeoutMs: 60_000 });
    const before = rssMiB(pid);
    let peak = before;
    const received = async () =>
      (await metricValue(sys.fe.url, 'sluice_frontend_kv_metrics_received_total')) ?? 0;
    for (let i = 0; i < FLOOD; i++) {
      sys.bus.report(sys.fe.namespace, {
        worker_id: `dp-${i}`,
        endpoint: `http://127.0.0.1:9/${i}`,
        dp_rank: 0,
        dp_size: DP_SIZE,
      });
      if (i % 5000 === 4999) {
        await sys.bus.flush();
        peak = Math.max(peak, rssMiB(pid));
      }
    }
    await sys.bus.flush();
    // Generous: 60,000 reports took over a minute to arrive on the busy 2-core machine.
    await waitFor(async () => (await received()) >= FLOOD, 'flood received', 180_000, 200);
    peak = Math.max(peak, rssMiB(pid));
    process.stdout.write(
      `RSS before ${before.toFixed(0)} MiB (quiet after ${quietAfterMs} ms), ` +
        `peak ${peak.toFixed(0)} MiB after ${FLOOD} workers\n`,
    );

    expect(sys.fe.proc.child.exitCode).toBeNull();
    expect(peak - before).toBeLessThan(RSS_RISE_LIMIT_MIB);
    expect(await metricValue(sys.fe.url, REFUSED, { reason: 'rank_cap' })).toBe(FLOOD - MAX_RANKS);
    expect(await metricValue(sys.fe.url, INVALID)).toBe(FLOOD - MAX_RANKS);
    // /metrics walks the reported ranks only: one series per tracked worker.
    const text = await (await fetch(`${sys.fe.url}/metrics`)).text();
    const decode = text
      .split('\n')
      .filter((l) => l.startsWith('dynamo_frontend_worker_active_decode_blocks{'));
    expect(decode).toHaveLength(MAX_RANKS);
    expect(decode.every((l) => l.includes('dp_rank="0"'))).toBe(true);
  }, 300_000);

  it('refuses an invalid --max-tracked-ranks at start, naming the flag', async () => {
    for (const bad of ['0', '-1', '1.5', 'lots']) {
      const proc = spawnApp('frontend', ['--max-tracked-ranks', bad]);
      expect(await proc.exited).toBe(2);
      expect(proc.output).toContain('--max-tracked-ranks');
    }
  }, 120_000);
});
