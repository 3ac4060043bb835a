import { RouterMode } from '../../config/frontend-config';
import { WorkerEntry } from '../../worker-monitor/worker-entry';
import { WorkerTraffic } from './worker-traffic';

/** The router's state for one model: where round-robin goes next, and the traffic it reads. */
export interface ModelRoute {
  cursor: number;
  readonly traffic: WorkerTraffic;
}

/**
 * Chooses a worker among the candidates (the model's free workers, or all of them when
 * admission control is off and every worker is busy). `eligible` filters out workers over the
 * router's in-flight threshold; without a threshold every candidate is eligible. `exclude`: the
 * workers a retried request already tried.
 */
export function pickWorker(
  mode: RouterMode,
  route: ModelRoute,
  candidates: readonly WorkerEntry[],
  eligible: ((w: WorkerEntry) => boolean) | null,
  exclude?: ReadonlySet<WorkerEntry>,
): WorkerEntry | undefined {
  const n = candidates.length;
  if (n === 0) return undefined;
  const ok = (w: WorkerEntry): boolean =>
    exclude?.has(w) !== true && (eligible === null || eligible(w));
  switch (mode) {
    case 'least-loaded':
      return leastLoaded(candidates, ok, route.traffic);
    case 'random': {
      const start = Math.floor(Math.random() * n);
      return scanFrom(candidates, start, ok);
    }
    case 'round-robin': {
      const start = route.cursor++ % n;
      if (route.cursor >= Number.MAX_SAFE_INTEGER) route.cursor = 0;
      return scanFrom(candidates, start, ok);
    }
  }
}

function scanFrom(
  candidates: readonly WorkerEntry[],
  start: number,
  ok: (w: WorkerEntry) => boolean,
): WorkerEntry | undefined {
  const n = candidates.length;
  for (let i = 0; i < n; i++) {
    const w = candidates[(start + i) % n];
    if (ok(w)) return w;
  }
  return undefined;
}

function leastLoaded(
  candidates: readonly WorkerEntry[],
  ok: (w: WorkerEntry) => boolean,
  traffic: WorkerTraffic,
): WorkerEntry | undefined {
  let best: WorkerEntry | undefined;
  let bestScore = Infinity;
  for (const w of candidates) {
    if (!ok(w)) continue;
    // Own in-flight prompt tokens first (exact and instant), reported KV usage breaks ties.
    const score = traffic.peek(w).promptTokens + w.kvUsage();
    if (score < bestScore) {
      best = w;
      bestScore = score;
    }
  }
  return best;
}
