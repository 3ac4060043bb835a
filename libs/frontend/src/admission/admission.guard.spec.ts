import { ExecutionContext } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { PriorityClass } from '../config/priority';
import { InvalidPriorityError, requestPriority } from '../priority/request-priority';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { TenantDirectory } from '../tenants/tenant-directory.service';
import { TenantIdentity } from '../tenants/tenant-identity';
import { TenantLimits } from '../tenants/tenant-limits.service';
import { AdmissionDecision, Verdict } from './admission-decision.service';
import { AdmissionGuard } from './admission.guard';
import {
  AdmissionPolicies,
  AdmissionPolicy,
  AdmissionRejectedError,
  AdmissionRequest,
} from './admission-policy';
import { ServiceOverloadedError } from './errors/service-overloaded.error';
import { ShuttingDownError } from './errors/shutting-down.error';
import { DRAINING, OVERLOADED, Refusal } from './refusal';

/** An HTTP context for one request to `url` with `body`; `req` is the request object. */
function contextOf(
  body: unknown,
  headers: Record<string, string> = {},
): ExecutionContext & { req: object } {
  const req = { url: '/v1/completions', ip: '10.0.0.7', headers, body };
  const res = { raw: { once: jest.fn() } };
  return {
    req,
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ExecutionContext & { req: object };
}

/** A policy that serves every request as `to`. */
class LoweringPolicy extends AdmissionPolicy {
  readonly name = 'lowering';
  constructor(private readonly to: PriorityClass) {
    super();
  }
  admit(request: AdmissionRequest): void {
    request.lowerPriority(this.to);
  }
}

/** A policy that records what it was shown and refuses when asked to. */
class RecordingPolicy extends AdmissionPolicy {
  readonly name = 'recording';
  readonly seen: AdmissionRequest[] = [];
  constructor(private readonly refuse = false) {
    super();
  }
  admit(request: AdmissionRequest): void {
    this.seen.push(request);
    if (this.refuse) throw new AdmissionRejectedError('no');
  }
}

let wouldReject: jest.Mock;
let refused: jest.Mock;

function make(
  refusal: Refusal | null | ((c: PriorityClass) => Refusal | null),
  policies: AdmissionPolicy[] = [],
  config = new FrontendConfig(),
  verdict?: Verdict,
): AdmissionGuard {
  const decide = (_body: unknown, c: PriorityClass) =>
    typeof refusal === 'function' ? refusal(c) : refusal;
  const judge = (_model: string, c: PriorityClass): Verdict =>
    verdict ?? (decide(null, c) === null ? 'admit' : 'refuse');
  const decision = { decide, judge } as unknown as AdmissionDecision;
  wouldReject = jest.fn();
  refused = jest.fn();
  const metrics = { wouldReject } as unknown as RequestMetricsService;
  return new AdmissionGuard(
    decision,
    new AdmissionPolicies(policies),
    config,
    metrics,
    new TenantIdentity(config, new TenantDirectory()),
    {
      overloaded: () => undefined,
      admit: () => ({ usage: () => undefined, dispatched: () => undefined, refused }),
    } as unknown as TenantLimits,
  );
}

/** Refuses every class but critical. */
const criticalOnly = (c: PriorityClass): Refusal | null => (c === 'critical' ? null : OVERLOADED);

describe('AdmissionGuard', () => {
  it('throws the overload error, carrying the pre-encoded 503, when every worker is busy', () => {
    const policy = new RecordingPolicy();
    const sut = make(OVERLOADED, [policy]);
    let thrown: unknown;
    try {
      void sut.canActivate(contextOf({ model: 'm' }));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ServiceOverloadedError);
    expect(thrown).toMatchObject({ model: 'm', refusal: OVERLOADED });
    expect(policy.seen).toEqual([]);
  });

  it('throws the shutting-down error while draining', () => {
    const sut = make(DRAINING);
    expect(() => sut.canActivate(contextOf({ model: 'm' }))).toThrow(ShuttingDownError);
  });

  it('admits at once without policies, and a body without a string model without running them', () => {
    const policy = new RecordingPolicy(true);
    expect(make(null).canActivate(contextOf({ model: 'm' }))).toBe(true);
    expect(make(null, [policy]).canActivate(contextOf({ model: 1 }))).toBe(true);
    expect(policy.seen).toEqual([]);
  });

  it('runs the policies in order with the request described, and admits when they all do', async () => {
    const first = new RecordingPolicy();
    const second = new RecordingPolicy();
    const sut = make(null, [first, second]);
    const body = { model: 'm', prompt: 'hi' };
    await expect(
      sut.canActivate(contextOf(body, { authorization: 'Bearer sk-123 ', 'x-team': 'batch' })),
    ).resolves.toBe(true);
    expect(first.seen).toEqual([
      expect.objectContaining({
        model: 'm',
        endpoint: 'completions',
        apiKey: 'sk-123',
        ip: '10.0.0.7',
        body,
        headers: expect.objectContaining({ 'x-team': 'batch' }),
      }),
    ]);
    expect(second.seen).toHaveLength(1);
  });

  it('counts a shadow model’s would-be rejection once, as a standard request, and admits it', async () => {
    const policy = new RecordingPolicy();
    const sut = make(null, [policy], new FrontendConfig(), 'would-refuse');
    await expect(sut.canActivate(contextOf({ model: 'm' }))).resolves.toBe(true);
    expect(wouldReject.mock.calls).toEqual([['m', 'completions', 'standard']]);
    expect(policy.seen).toHaveLength(1);
  });

  it('counts nothing for an admitted request of a model with a free worker, or a refused one', () => {
    expect(make(null).canActivate(contextOf({ model: 'm' }))).toBe(true);
    expect(wouldReject).not.toHaveBeenCalled();
    expect(() => make(OVERLOADED).canActivate(contextOf({ model: 'm' }))).toThrow();
    expect(wouldReject).not.toHaveBeenCalled();
  });

  it("passes a policy's refusal on, and later policies do not run", async () => {
    const later = new RecordingPolicy();
    const sut = make(null, [new RecordingPolicy(true), later]);
    await expect(sut.canActivate(contextOf({ model: 'm' }))).rejects.toThrow(
      AdmissionRejectedError,
    );
    expect(later.seen).toEqual([]);
  });

  describe('priority classes (docs/security.md#priority-classes-who-may-set-x-sluice-priority)', () => {
    it('refuses an invalid priority header with a 400 naming the header, before anything else', () => {
      const policy = new RecordingPolicy();
      for (const value of ['urgent', 'CRITICAL', '', 'critical,critical']) {
        const context = contextOf({ model: 'm' }, { 'x-sluice-priority': value });
        expect(() => make(DRAINING, [policy]).canActivate(context)).toThrow(InvalidPriorityError);
      }
      const error = new InvalidPriorityError('x-sluice-priority');
      expect(error).toMatchObject({ status: 400, type: 'invalid_request_error' });
      expect(error.message).toBe(
        'Invalid x-sluice-priority header: expected one of critical, standard, sheddable',
      );
      expect(policy.seen).toEqual([]);
    });

    it("decides with the header's class, keeps it beside the request and shows it to policies", async () => {
      const policy = new RecordingPolicy();
      const sut = make(criticalOnly, [policy]);
      const critical = contextOf({ model: 'm' }, { 'x-sluice-priority': 'critical' });
      await expect(sut.canActivate(critical)).resolves.toBe(true);
      expect(requestPriority(critical.req)).toBe('critical');
      expect(policy.seen.map((r) => r.priority)).toEqual(['critical']);
      const standard = contextOf({ model: 'm' });
      expect(() => sut.canActivate(standard)).toThrow(ServiceOverloadedError);
      expect(requestPriority(standard.req)).toBe('standard');
    });

    it('ignores the header with --priority-header none, and reads a renamed one', () => {
      const none = make(criticalOnly, [], new FrontendConfig({ priorityHeader: null }));
      const claims = contextOf({ model: 'm' }, { 'x-sluice-priority': 'critical' });
      expect(() => none.canActivate(claims)).toThrow(ServiceOverloadedError);
      const invalid = contextOf({ model: 'm' }, { 'x-sluice-priority': 'bogus' });
      expect(() => none.canActivate(invalid)).toThrow(ServiceOverloadedError);
      const renamed = make(criticalOnly, [], new FrontendConfig({ priorityHeader: 'x-tier' }));
      expect(renamed.canActivate(contextOf({ model: 'm' }, { 'x-tier': 'critical' }))).toBe(true);
    });

    it('judges a request again when a policy lowers its class, and serves it as that class', async () => {
      const later = new RecordingPolicy();
      const lowered = contextOf({ model: 'm' }, { 'x-sluice-priority': 'critical' });
      const sut = make(criticalOnly, [new LoweringPolicy('sheddable'), later]);
      await expect(sut.canActivate(lowered)).rejects.toThrow(ServiceOverloadedError);
      // Refused after the tenant's limits admitted it: counted overloaded, its charge given back.
      expect(refused).toHaveBeenCalledTimes(1);
      expect(requestPriority(lowered.req)).toBe('sheddable');
      expect(later.seen.map((r) => r.priority)).toEqual(['sheddable']);

      const admitted = contextOf({ model: 'm' }, { 'x-sluice-priority': 'critical' });
      await expect(
        make(null, [new LoweringPolicy('standard')]).canActivate(admitted),
      ).resolves.toBe(true);
      expect(requestPriority(admitted.req)).toBe('standard');
    });

    it('never raises a class: asking a policy for a higher one changes nothing', async () => {
      const context = contextOf({ model: 'm' }, { 'x-sluice-priority': 'sheddable' });
      const sut = make(null, [new LoweringPolicy('critical')]);
      await expect(sut.canActivate(context)).resolves.toBe(true);
      expect(requestPriority(context.req)).toBe('sheddable');
    });
  });
});
