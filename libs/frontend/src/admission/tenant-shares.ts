import { Injectable } from '@nestjs/common';

/**
 * Milliseconds over which a tenant's admitted requests fade out of its recent rate (the time constant
 * of an exponential decay): short enough to follow a change of load, long enough to see a light
 * tenant's few requests.
 */
export const SHARE_TAU_MS = 5000;
/** A tenant whose recent count fell below this (a request, 23 s ago) is inactive. */
const ACTIVE = 0.01;
/** Entries kept per model before inactive ones are swept on the next admission. */
const SWEEP_ABOVE = 64;

/** One tenant's admissions for one model: a count decayed to `at`, and its weight. */
interface Rate {
  count: number;
  at: number;
  weight: number;
}

/**
 * Each tenant's recent admitted rate per model, and whether a tenant is under its weighted fair
 * share of it (docs/decisions/0225-fair-share-refusals.md): its rate per unit of weight below
 * that of all the model's active tenants together, counting itself. The router records every
 * request it sends to a worker or queues (`admitted`); the admission decision asks `underShare`
 * only while every worker of the model is busy, so it costs a request nothing otherwise. A
 * lone tenant is never under its share, so with no tenants configured (everyone `default`)
 * refusals are as they were. Counts are exponentially decayed (τ = `SHARE_TAU_MS`): an update
 * is one multiplication, and no bucket or timer is needed.
 */
@Injectable()
export class TenantShares {
  private readonly models = new Map<string, Map<string, Rate>>();

  /** A request of `tenant` (weight `weight`) was sent to a worker of the model or queued for it. */
  admitted(model: string, tenant: string, weight: number, now = performance.now()): void {
    let rates = this.models.get(model);
    if (!rates) {
      rates = new Map();
      this.models.set(model, rates);
    }
    const rate = rates.get(tenant);
    if (rate) {
      rate.count = decayed(rate, now) + 1;
      rate.at = now;
      rate.weight = weight;
      return;
    }
    if (rates.size >= SWEEP_ABOVE) sweep(rates, now);
    rates.set(tenant, { count: 1, at: now, weight });
  }

  /**
   * Whether `tenant` (weight `weight`) has had less than its weighted share of the model's recent
   * admissions: false when no other tenant is active on the model. O(active tenants), no
   * allocation.
   */
  underShare(model: string, tenant: string, weight: number, now = performance.now()): boolean {
    const rates = this.models.get(model);
    if (!rates) return false;
    let own = 0;
    let total = 0;
    let weights = weight;
    let others = false;
    for (const [id, rate] of rates) {
      const count = decayed(rate, now);
      if (id === tenant) {
        own = count;
        total += count;
        continue;
      }
      if (count < ACTIVE) continue;
      others = true;
      total += count;
      weights += rate.weight;
    }
    return others && own / weight < total / weights;
  }

  /** Drops what is known of a model (the registry forgot it). */
  forget(model: string): void {
    this.models.delete(model);
  }
}

function decayed(rate: Rate, now: number): number {
  return now <= rate.at ? rate.count : rate.count * Math.exp((rate.at - now) / SHARE_TAU_MS);
}

function sweep(rates: Map<string, Rate>, now: number): void {
  for (const [id, rate] of rates) if (decayed(rate, now) < ACTIVE) rates.delete(id);
}
