/** Effective busy thresholds for one model; `null` means "not configured, never fires". */
export interface BusyThresholds {
  readonly activeDecodeBlocks: number | null;
  readonly activePrefillTokens: number | null;
  readonly activePrefillTokensFrac: number | null;
}

export const THRESHOLD_KEYS = [
  'activeDecodeBlocks',
  'activePrefillTokens',
  'activePrefillTokensFrac',
] as const;

export type ThresholdKey = (typeof THRESHOLD_KEYS)[number];

/** A stored per-model override: a key that is absent or `null` falls back to the global flag. */
export type ThresholdOverride = Partial<Record<ThresholdKey, number | null>>;

export function noThresholds(t: BusyThresholds): boolean {
  return (
    t.activeDecodeBlocks === null &&
    t.activePrefillTokens === null &&
    t.activePrefillTokensFrac === null
  );
}
