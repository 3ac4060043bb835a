import { Injectable } from '@nestjs/common';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RankState, WorkerEntry } from './worker-entry';
import { WorkerRegistry } from './worker-registry.service';
import { METRIC } from '../metrics/metric-names';

type RankField = keyof Pick<
  RankState,
  'activeDecodeBlocks' | 'kvTotalBlocks' | 'activePrefillTokens' | 'numRequestsWaiting'
>;

/** The per-rank gauges of docs/metrics.md (plus requests waiting), in exposition order. */
export const RANK_GAUGES: ReadonlyArray<{ name: string; help: string; field: RankField }> = [
  {
    name: METRIC.workerDecodeBlocks,
    help: 'KV-cache blocks in use, as last reported by the worker rank',
    field: 'activeDecodeBlocks',
  },
  {
    name: METRIC.workerKvTotalBlocks,
    help: 'KV-cache blocks in total, as last reported by the worker rank',
    field: 'kvTotalBlocks',
  },
  {
    name: METRIC.workerPrefillTokens,
    help: 'Prompt tokens waiting for prefill, as last reported by the worker rank',
    field: 'activePrefillTokens',
  },
  {
    name: METRIC.workerRequestsWaiting,
    help: 'Requests queued in the engine (num_requests_waiting), as last reported by the worker rank',
    field: 'numRequestsWaiting',
  },
];
export const BUSY_GAUGE = {
  name: METRIC.workerBusy,
  help: '1 when every rank of the worker is over a busy threshold',
};
export const EJECTED_GAUGE = {
  name: METRIC.workerEjected,
  help: '1 while outlier ejection holds the worker out of routing (--eject-after), its probe included',
};

/**
 * Longest the renderer holds the event loop before letting waiting requests through; a
 * scavenge that falls inside a slice adds a millisecond or two.
 */
const SLICE_MS = 2;
/** Ranks rendered between two encodings and clock reads (a worker may have hundreds). */
const BATCH_RANKS = 256;
const FAMILIES = [...RANK_GAUGES, BUSY_GAUGE, EJECTED_GAUGE];
const BUSY = RANK_GAUGES.length;
const EJECTED = BUSY + 1;
/** Each family's `# HELP` and `# TYPE` lines, after a blank line for all but the first. */
const HEADS = FAMILIES.map(({ name, help }, k) =>
  Buffer.from(`${k === 0 ? '' : '\n'}# HELP ${name} ${escapeText(help)}\n# TYPE ${name} gauge\n`),
);

/**
 * Per-worker gauges of docs/metrics.md as Prometheus text, read from the worker registry at scrape
 * time. Written directly rather than through prom-client gauges: with 8,000 ranks, resetting
 * and setting 40,000 labelled series per scrape held the event loop for ~100 ms. Here a scrape
 * walks the workers in slices of a few ms, yielding in between, with no label hashing; the
 * escaped label text of a worker is kept while the worker lives. Lines become bytes a batch
 * of workers at a time, so no multi-megabyte string is joined or encoded in one go. The
 * registry is the only copy of the state, so a forgotten worker has no series from the next
 * scrape on, and a rank that does not report a field has no series for it. Same text as
 * prom-client would write.
 */
@Injectable()
export class WorkerGaugesRenderer {
  private readonly labelText = new WeakMap<WorkerEntry, string>();

  constructor(private readonly registry: WorkerRegistry) {}

  /**
   * The families' text as UTF-8 chunks to send in order: each family its `# HELP` and `# TYPE`
   * lines then its samples, a blank line between families (as prom-client writes them).
   */
  async render(): Promise<Buffer[]> {
    const lines: string[][] = FAMILIES.map(() => []);
    const bytes: Buffer[][] = HEADS.map((head) => [head]);
    // A snapshot: a worker that joins while the scrape yields shows at the next scrape, and a
    // worker replaced under the same id cannot be written twice.
    const workers = [...this.registry.liveWorkers()];
    // The request that asked, and prom-client's registry, have already used this turn.
    await nextTurn();
    let deadline = performance.now() + SLICE_MS;
    let batch = 0;
    for (const worker of workers) {
      if (this.registry.model(worker.model)?.workers.get(worker.id) !== worker) continue;
      this.renderWorker(worker, lines);
      batch += worker.ranks.size + 1;
      if (batch < BATCH_RANKS) continue;
      // Encoding is most of the cost: done per batch, it stays inside the slice.
      batch = 0;
      flush(lines, bytes);
      if (performance.now() > deadline) {
        await nextTurn();
        deadline = performance.now() + SLICE_MS;
      }
    }
    flush(lines, bytes);
    return bytes.flat();
  }

  private renderWorker(worker: WorkerEntry, lines: string[][]): void {
    const labels = this.labelsOf(worker);
    // Only the ranks that reported: never a walk over dp_size slots.
    for (const [rank, state] of worker.ranks) {
      const tail = `{${labels},dp_rank="${rank}"} `;
      for (let k = 0; k < RANK_GAUGES.length; k++) {
        const value = state[RANK_GAUGES[k].field];
        if (value !== undefined) lines[k].push(RANK_GAUGES[k].name + tail + valueText(value));
      }
    }
    lines[BUSY].push(`${BUSY_GAUGE.name}{${labels}} ${worker.busy ? 1 : 0}`);
    lines[EJECTED].push(`${EJECTED_GAUGE.name}{${labels}} ${worker.inRouting ? 0 : 1}`);
  }

  private labelsOf(worker: WorkerEntry): string {
    let text = this.labelText.get(worker);
    if (text === undefined) {
      text = `model="${escapeLabel(worker.model)}",worker_id="${escapeLabel(worker.id)}"`;
      this.labelText.set(worker, text);
    }
    return text;
  }
}

/** Moves the lines written so far into each family's chunks. */
function flush(lines: string[][], bytes: Buffer[][]): void {
  for (let k = 0; k < lines.length; k++) {
    if (lines[k].length === 0) continue;
    bytes[k].push(Buffer.from(`${lines[k].join('\n')}\n`));
    lines[k] = [];
  }
}

/** Escaping of the text format (as prom-client does it): backslash and newline... */
function escapeText(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** ...and in label values the double quote too. */
function escapeLabel(s: string): string {
  return escapeText(s).replace(/"/g, '\\"');
}

/** Sample values as prom-client writes them. */
function valueText(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return `${v}`;
}
