import { Injectable } from '@nestjs/common';
import { WorkerEntry } from '../../worker-monitor/worker-entry';

/** What this frontend has in flight on one worker: requests leased and their prompt tokens. */
export interface Inflight {
  requests: number;
  /** Of `requests`, those still waiting for their first token (in the worker's prefill). */
  prefilling: number;
  promptTokens: number;
}

const NONE: Readonly<Inflight> = Object.freeze({ requests: 0, prefilling: 0, promptTokens: 0 });

/**
 * The router's own bookkeeping per worker, kept beside the monitor's entries rather than on
 * them: the monitor owns what a worker reports, the router what it has sent the worker. Keyed
 * by the entry itself, so a worker the registry forgets or replaces takes its count along.
 */
@Injectable()
export class WorkerTraffic {
  private readonly inflight = new WeakMap<WorkerEntry, Inflight>();

  /** The live count of a worker, made on first use; only the router changes it. */
  of(worker: WorkerEntry): Inflight {
    let counts = this.inflight.get(worker);
    if (!counts) {
      counts = { requests: 0, prefilling: 0, promptTokens: 0 };
      this.inflight.set(worker, counts);
    }
    return counts;
  }

  /** A read-only view (zeros for a worker never leased), e.g. for the status page. */
  peek(worker: WorkerEntry): Readonly<Inflight> {
    return this.inflight.get(worker) ?? NONE;
  }
}
