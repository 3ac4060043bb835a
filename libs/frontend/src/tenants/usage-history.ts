/** Minutes of per-tenant history kept for `GET /tenants/{id}/usage` (the longest window). */
export const HISTORY_MINUTES = 60;

export type UsageField = 'admitted' | 'rate_limited' | 'overloaded' | 'prompt' | 'completion';
const FIELDS: readonly UsageField[] = [
  'admitted',
  'rate_limited',
  'overloaded',
  'prompt',
  'completion',
];

/** One tenant's requests by outcome and tokens by kind, in one-minute buckets for an hour. */
export class UsageHistory {
  private readonly minutes = new Float64Array(HISTORY_MINUTES).fill(-Infinity);
  private readonly values = FIELDS.map(() => new Float64Array(HISTORY_MINUTES));

  add(field: UsageField, amount: number, nowMs = Date.now()): void {
    const minute = Math.floor(nowMs / 60_000);
    const i = minute % HISTORY_MINUTES;
    if (this.minutes[i] !== minute) {
      this.minutes[i] = minute;
      for (const v of this.values) v[i] = 0;
    }
    this.values[FIELDS.indexOf(field)][i] += amount;
  }

  /** Sums over the last `minutes` minutes (the current one included). */
  sum(minutes: number, nowMs = Date.now()): Record<UsageField, number> {
    const now = Math.floor(nowMs / 60_000);
    const out = Object.fromEntries(FIELDS.map((f) => [f, 0])) as Record<UsageField, number>;
    for (let i = 0; i < HISTORY_MINUTES; i++) {
      if (now - this.minutes[i] >= minutes) continue;
      FIELDS.forEach((f, k) => (out[f] += this.values[k][i]));
    }
    return out;
  }
}
