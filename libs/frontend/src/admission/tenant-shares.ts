import { Injectable } from '@nestjs/common';

/** One tenant's requests held on one model: in flight on its workers or waiting for one. */
interface Held {
  n: number;
  weight: number;
}

/**
 * What each tenant holds of each model (its requests in flight on the model's workers from this
 * frontend, and those waiting in the router queue), and whether a tenant is under its weighted
 * fair share of it (docs/decisions/0225-fair-share-refusals.md): what it holds per unit of
 * weight below what the tenants holding anything hold together per unit of their weights,
 * itself counted among them. The router counts a request from the moment it is sent to a worker
 * or queued until its lease ends or it leaves the queue unserved (`started`, `ended`); the
 * admission decision asks `underShare` only while every worker of the model is busy, so it costs
 * an admitted request two counts. A lone tenant is never under its share, so with no tenants
 * configured (everyone `default`) refusals are as they were.
 */
@Injectable()
export class TenantShares {
  private readonly models = new Map<string, Map<string, Held>>();

  /** A request of `tenant` (weight `weight`) was sent to a worker of the model or queued for it. */
  started(model: string, tenant: string, weight: number): void {
    let held = this.models.get(model);
    if (!held) {
      held = new Map();
      this.models.set(model, held);
    }
    const own = held.get(tenant);
    if (own) {
      own.n++;
      own.weight = weight;
    } else {
      held.set(tenant, { n: 1, weight });
    }
  }

  /** A request counted by `started` ended, or left the queue unserved. */
  ended(model: string, tenant: string): void {
    const held = this.models.get(model);
    const own = held?.get(tenant);
    if (!held || !own) return;
    // Counts of tenants and models without requests go: the maps hold only what is held.
    if (--own.n > 0) return;
    held.delete(tenant);
    if (held.size === 0) this.models.delete(model);
  }

  /**
   * Whether `tenant` (weight `weight`) holds less of the model than its weighted share: false
   * when no other tenant holds anything. `self`: requests of the tenant counted already that are
   * the ones asking (a queued waiter), left out of the count. O(tenants holding requests), no
   * allocation.
   */
  underShare(model: string, tenant: string, weight: number, self = 0): boolean {
    const held = this.models.get(model);
    if (!held) return false;
    let own = -self;
    let total = -self;
    let weights = weight;
    let others = false;
    for (const [id, h] of held) {
      total += h.n;
      if (id === tenant) {
        own += h.n;
      } else {
        others = true;
        weights += h.weight;
      }
    }
    return others && own / weight < total / weights;
  }
}
