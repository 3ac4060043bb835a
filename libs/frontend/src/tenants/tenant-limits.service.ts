import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventPublisher } from '@sluice/bus';
import { estimatePromptTokens, subjectFor, TENANT_USAGE_EVENT } from '@sluice/contracts';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { randomUUID } from 'node:crypto';
import { Counter } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { withoutStack } from '../errors/frontend.error';
import { METRIC } from '../metrics/metric-names';
import { TenantLimitError } from './errors/tenant.errors';
import { TenantCharge } from './tenant-charge';
import { TenantDirectory } from './tenant-directory.service';
import { SlidingWindow } from './sliding-window';
import { UsageField, UsageHistory } from './usage-history';

interface Usage {
  readonly requests: SlidingWindow;
  readonly tokens: SlidingWindow;
  inflight: number;
}

/** Label of a tenant that is not configured: the `tenant` label stays bounded. */
const OTHER = 'other';
/** A peer's message naming more tenants than this, or absurd amounts, is ignored. */
const MAX_PEER_TENANTS = 10_000;
const MAX_PEER_AMOUNT = 1e12;

const nowSecond = (): number => Math.floor(Date.now() / 1000);

interface RequestBody {
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
}

/**
 * The tenants' limits at admission (docs/api.md#tenants): requests and tokens per minute over a
 * sliding minute, and requests in flight. Consumption is shared with the other replicas: each
 * sends what it admitted (and its token corrections) every `--tenant-sync-ms`, coalesced per
 * tenant, and adds what the others sent to its own windows. No round trip per request.
 */
@Injectable()
export class TenantLimits implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Tenants');
  private readonly origin = randomUUID();
  private readonly usage = new Map<string, Usage>();
  /** Configured tenants' history on this replica, for `GET /tenants/{id}/usage`. */
  private readonly history = new Map<string, UsageHistory>();
  /** Consumption not yet sent to the other replicas: tenant → [requests, tokens]. */
  private pending = new Map<string, [number, number]>();
  private timer: NodeJS.Timeout | undefined;
  /** The `overloaded` child of each label, kept: the early refusal paths count through it. */
  private readonly overloadedCounters = new Map<string, Counter.Internal>();

  constructor(
    private readonly config: FrontendConfig,
    private readonly directory: TenantDirectory,
    private readonly publisher: EventPublisher,
    @InjectMetric(METRIC.tenantRequests) private readonly requests: Counter<string>,
    @InjectMetric(METRIC.tenantTokens) private readonly tokens: Counter<string>,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.flush(), this.config.tenantSyncMs);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.flush();
  }

  /** The `tenant` label: a configured tenant's id, else `other`. */
  label(tenant: string): string {
    return this.directory.get(tenant) ? tenant : OTHER;
  }

  /** A request of the tenant refused with the overload 503 after the tenant was known. */
  overloaded(tenant: string): void {
    const label = this.label(tenant);
    let counter = this.overloadedCounters.get(label);
    if (counter === undefined) {
      counter = this.requests.labels(label, 'overloaded');
      this.overloadedCounters.set(label, counter);
    }
    counter.inc();
    this.record(tenant, 'overloaded', 1);
  }

  /**
   * The tenant's requests by outcome and tokens by kind on this replica over the last `minutes`,
   * and the last minute's consumption as its limits see it (every replica's).
   */
  report(tenant: string, minutes: number) {
    const sums = this.history.get(tenant)?.sum(minutes);
    const now = nowSecond();
    const u = this.usage.get(tenant);
    return {
      requests: {
        admitted: sums?.admitted ?? 0,
        rate_limited: sums?.rate_limited ?? 0,
        overloaded: sums?.overloaded ?? 0,
      },
      tokens: { prompt: sums?.prompt ?? 0, completion: sums?.completion ?? 0 },
      last_minute: {
        requests: u?.requests.total(now) ?? 0,
        tokens: u?.tokens.total(now) ?? 0,
        in_flight: u?.inflight ?? 0,
      },
    };
  }

  private record(tenant: string, field: UsageField, amount: number): void {
    if (!this.directory.get(tenant)) return;
    let h = this.history.get(tenant);
    if (!h) {
      h = new UsageHistory();
      this.history.set(tenant, h);
    }
    h.add(field, amount);
  }

  /**
   * Admits one request of `tenant` to its limits or throws the 429. The request is counted
   * `admitted` when the proxy sends it to a worker (`dispatched`), `overloaded` if it is answered
   * a 503 instead (`refused`, which gives its charge back); the charge is settled by the proxy
   * (`usage`) and released when the response ends (`onEnd`).
   */
  admit(tenant: string, body: unknown, onEnd: (release: () => void) => void): TenantCharge {
    const record = this.directory.get(tenant);
    const label = record ? tenant : OTHER;
    const promptEstimate = body ? estimatePromptTokens(body) : 0;
    const b = (body ?? {}) as RequestBody;
    const maxTokens = Number(b.max_completion_tokens ?? b.max_tokens ?? 0);
    const charged =
      promptEstimate + (Number.isSafeInteger(maxTokens) && maxTokens > 0 ? maxTokens : 0);
    const now = nowSecond();
    const u = record ? this.usageOf(tenant) : undefined;
    if (record && u) {
      const refuse = (
        limit: string,
        reason: 'tenant_rate_limit' | 'tenant_concurrency',
        secs: number,
      ) => {
        this.requests.inc({ tenant: label, outcome: 'rate_limited' });
        this.record(tenant, 'rate_limited', 1);
        throw withoutStack(() => new TenantLimitError(tenant, limit, reason, secs));
      };
      if (record.maxConcurrency !== null && u.inflight >= record.maxConcurrency) {
        refuse(`max_concurrency ${record.maxConcurrency}`, 'tenant_concurrency', 1);
      }
      const rpm = record.requestsPerMinute;
      if (rpm !== null && u.requests.total(now) + 1 > rpm) {
        refuse(
          `requests_per_minute ${rpm}`,
          'tenant_rate_limit',
          u.requests.retryAfter(now, 1, rpm),
        );
      }
      const tpm = record.tokensPerMinute;
      if (tpm !== null && u.tokens.total(now) + charged > tpm) {
        refuse(
          `tokens_per_minute ${tpm}`,
          'tenant_rate_limit',
          u.tokens.retryAfter(now, charged, tpm),
        );
      }
      u.requests.add(now, 1);
      u.tokens.add(now, charged);
      u.inflight++;
      this.share(tenant, 1, charged);
    }
    let settled = false;
    let counted = false;
    const settle = (actual: number) => {
      if (settled) return;
      settled = true;
      if (u && actual !== charged) {
        u.tokens.add(now, actual - charged, nowSecond());
        this.share(tenant, 0, actual - charged);
      }
    };
    onEnd(() => {
      if (u) u.inflight--;
      // Never answered by a worker: nothing was consumed.
      settle(0);
    });
    return {
      dispatched: () => {
        if (counted) return;
        counted = true;
        this.requests.inc({ tenant: label, outcome: 'admitted' });
        this.record(tenant, 'admitted', 1);
      },
      refused: () => {
        if (counted) return;
        counted = true;
        this.overloaded(tenant);
        if (u) {
          u.requests.add(now, -1, nowSecond());
          this.share(tenant, -1, 0);
        }
        settle(0);
      },
      usage: (prompt, completion) => {
        const p = prompt ?? promptEstimate;
        const c = completion ?? charged - promptEstimate;
        this.tokens.inc({ tenant: label, kind: 'prompt' }, p);
        this.tokens.inc({ tenant: label, kind: 'completion' }, c);
        this.record(tenant, 'prompt', p);
        this.record(tenant, 'completion', c);
        settle(p + c);
      },
    };
  }

  /** Consumption another replica sent: added to this replica's windows now. */
  onPeerUsage(payload: unknown): void {
    const p = payload as { origin?: unknown; usage?: unknown } | undefined;
    if (p?.origin === this.origin || typeof p?.usage !== 'object' || p.usage === null) return;
    const entries = Object.entries(p.usage as Record<string, unknown>);
    if (entries.length > MAX_PEER_TENANTS) return;
    const now = nowSecond();
    for (const [tenant, amounts] of entries) {
      if (!this.directory.get(tenant) || !Array.isArray(amounts)) continue;
      const [requests, tokens] = amounts as unknown[];
      if (!isAmount(requests) || !isAmount(tokens)) continue;
      const u = this.usageOf(tenant);
      u.requests.add(now, requests);
      u.tokens.add(now, tokens);
    }
  }

  /** Requests of the tenant in flight here (status page, tests). */
  inflight(tenant: string): number {
    return this.usage.get(tenant)?.inflight ?? 0;
  }

  private usageOf(tenant: string): Usage {
    let u = this.usage.get(tenant);
    if (!u) {
      u = { requests: new SlidingWindow(), tokens: new SlidingWindow(), inflight: 0 };
      this.usage.set(tenant, u);
    }
    return u;
  }

  private share(tenant: string, requests: number, tokens: number): void {
    const p = this.pending.get(tenant);
    if (p) {
      p[0] += requests;
      p[1] += tokens;
    } else this.pending.set(tenant, [requests, tokens]);
  }

  private flush(): void {
    if (this.pending.size > 0) {
      const usage = Object.fromEntries(this.pending);
      this.pending = new Map();
      try {
        this.publisher.publish(subjectFor(this.config.namespace, TENANT_USAGE_EVENT), {
          origin: this.origin,
          usage,
        });
      } catch (err) {
        this.logger.warn(`could not send tenant consumption to the other replicas: ${String(err)}`);
      }
    }
    // Forget tenants idle for a minute, or no longer configured: memory follows activity.
    const now = nowSecond();
    for (const tenant of this.history.keys()) {
      if (!this.directory.get(tenant)) this.history.delete(tenant);
    }
    for (const [tenant, u] of this.usage) {
      if (u.inflight === 0 && (u.requests.idle(now) || !this.directory.get(tenant))) {
        if (u.tokens.idle(now)) this.usage.delete(tenant);
      }
    }
  }
}

function isAmount(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= MAX_PEER_AMOUNT;
}
