import { ExecutionContext } from '@nestjs/common';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
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

/** An HTTP context for one request to `url` with `body`. */
function contextOf(body: unknown, headers: Record<string, string> = {}): ExecutionContext {
  const req = { url: '/v1/completions', ip: '10.0.0.7', headers, body };
  const res = { raw: { once: jest.fn() } };
  return {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ExecutionContext;
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

function make(
  refusal: Refusal | null,
  policies: AdmissionPolicy[] = [],
  verdict: Verdict = refusal === null ? 'admit' : 'refuse',
): AdmissionGuard {
  const decision = { decide: () => refusal, judge: () => verdict } as unknown as AdmissionDecision;
  wouldReject = jest.fn();
  const metrics = { wouldReject } as unknown as RequestMetricsService;
  return new AdmissionGuard(decision, new AdmissionPolicies(policies), metrics);
}

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
    const sut = make(null, [policy], 'would-refuse');
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
});
