import { RouterMode } from '../config/frontend-config';
import { ModelEntry, WorkerEntry } from '../monitor/worker-entry';

/**
 * Chooses a worker among the candidates (the model's free workers, or all of them when
 * admission control is off and every worker is busy). `eligible` filters out workers over the
 * router's in-flight threshold; without a threshold every candidate is eligible.
 */
export function pickWorker(
  mode: RouterMode,
  model: ModelEntry,
  candidates: readonly WorkerEntry[],
  eligible: ((w: WorkerEntry) => boolean) | null,
  exclude?: WorkerEntry,
): WorkerEntry | undefined {
  const n = candidates.length;
  if (n === 0) return undefined;
  const ok = (w: WorkerEntry): boolean => w !== exclude && (eligible === null || eligible(w));
  switch (mode) {
    case 'least-loaded':
      return leastLoaded(candidates, ok);
    case 'random': {
      const start = Math.floor(Math.random() * n);
      return scanFrom(candidates, start, ok);
    }
    case 'round-robin': {
      const start = model.cursor++ % n;
      if (model.cursor >= Number.MAX_SAFE_INTEGER) model.cursor = 0;
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
): WorkerEntry | undefined {
  let best: WorkerEntry | undefined;
  let bestScore = Infinity;
  for (const w of candidates) {
    if (!ok(w)) continue;
    // Own in-flight prompt tokens first (exact and instant), reported KV usage breaks ties.
    const score = w.inflightPromptTokens + w.kvUsage();
    if (score < bestScore) {
      best = w;
      bestScore = score;
    }
  }
  return best;
}
