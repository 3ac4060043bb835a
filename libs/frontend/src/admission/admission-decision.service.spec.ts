import { AdmissionControl, FrontendConfig } from '../config/frontend-config';
import { PRIORITY_CLASSES, PriorityClass } from '../config/priority';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { ModelEntry, WorkerEntry } from '../worker-monitor/worker-entry';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { CriticalWait } from './critical-wait';
import { TenantShares } from './tenant-shares';
import { TenantDirectory } from '../tenants/tenant-directory.service';
import { TenantIdentity } from '../tenants/tenant-identity';
import { LifecycleService } from './lifecycle.service';
import { AdmissionDecision } from './admission-decision.service';
import { CLASS_REFUSED, DRAINING, OVERLOADED } from './refusal';

/**
 * A registry with one model, `busy`, whose only worker is busy for every class, one, `free`,
 * with a free one, one, `critical-only`, whose only worker is free for critical requests only, and
 * one, `shed-only`, whose only worker is busy for sheddable requests only.
 */
function registry(): WorkerRegistry {
  const freeFor: Record<string, readonly PriorityClass[]> = {
    busy: [],
    free: PRIORITY_CLASSES,
    'critical-only': ['critical'],
    'shed-only': ['critical', 'standard'],
  };
  const models = new Map<string, ModelEntry>();
  for (const [name, classes] of Object.entries(freeFor)) {
    const model = new ModelEntry(name);
    const worker = new WorkerEntry(`${name}-w`, name, 'http://127.0.0.1:9', 1, 0);
    model.workers.set(worker.id, worker);
    model.routable++;
    for (const c of classes) model.markFree(worker, c);
    models.set(name, model);
  }
  return { model: (name: string) => models.get(name) } as unknown as WorkerRegistry;
}

function make(admissionControl: AdmissionControl): {
  sut: AdmissionDecision;
  lifecycle: LifecycleService;
  thresholds: ThresholdsService;
  criticalWait: CriticalWait;
} {
  const lifecycle = new LifecycleService();
  const thresholds = new ThresholdsService(new FrontendConfig({ admissionControl }));
  const criticalWait = new CriticalWait();
  const config = new FrontendConfig({ admissionControl });
  const sut = new AdmissionDecision(
    registry(),
    thresholds,
    lifecycle,
    criticalWait,
    new TenantShares(),
    new TenantIdentity(config, new TenantDirectory()),
  );
  return { sut, lifecycle, thresholds, criticalWait };
}

describe('AdmissionDecision', () => {
  it('refuses a model whose every worker is busy, with the contract body pre-encoded', () => {
    const { sut } = make('token-capacity');
    expect(sut.decide({ model: 'busy', messages: [] })).toBe(OVERLOADED);
    expect(JSON.parse(OVERLOADED.payload.toString())).toEqual({
      message: 'Service temporarily unavailable: All workers are busy, please retry later',
      type: 'service_unavailable',
      code: 503,
    });
    expect(OVERLOADED).toMatchObject({ status: 503, errorType: 'overload', rejection: true });
  });

  it('admits a model with a free worker, an unknown model, and bodies without a string model', () => {
    const { sut } = make('token-capacity');
    for (const body of [
      { model: 'free' },
      { model: 'never-seen' },
      { model: 1 },
      {},
      null,
      'busy',
      ['busy'],
    ]) {
      expect(sut.decide(body)).toBeNull();
    }
  });

  it('judges a request by its priority class: refused when every worker is busy for that class', () => {
    const { sut } = make('token-capacity');
    const body = { model: 'critical-only' };
    expect(sut.decide(body, 'critical')).toBeNull();
    // Busy at the configured (standard) thresholds: the plain overload, for standard and below.
    expect(sut.decide(body, 'standard')).toBe(OVERLOADED);
    expect(sut.decide(body, 'sheddable')).toBe(OVERLOADED);
    // Without a class, a request is standard.
    expect(sut.decide(body)).toBe(OVERLOADED);
    // Free at the configured thresholds, busy only for sheddable: refused for its class.
    const shedOnly = { model: 'shed-only' };
    expect(sut.decide(shedOnly, 'sheddable')).toBe(CLASS_REFUSED);
    expect(sut.decide(shedOnly, 'standard')).toBeNull();
    expect(CLASS_REFUSED.payload.equals(OVERLOADED.payload)).toBe(true);
    expect(CLASS_REFUSED.reason).toBe('priority');
    for (const c of PRIORITY_CLASSES) {
      expect(sut.decide({ model: 'free' }, c)).toBeNull();
      expect(sut.decide({ model: 'busy' }, c)).toBe(OVERLOADED);
    }
  });

  it('lets a critical request wait while lower classes hold more requests than critical ones wait', () => {
    const { sut, criticalWait } = make('token-capacity');
    criticalWait.started('busy', 'standard');
    criticalWait.started('busy', 'critical'); // not counted: only lower classes free room for it
    expect(sut.judge('busy', 'critical')).toBe('wait');
    expect(sut.decide({ model: 'busy' }, 'critical')).toBeNull();
    expect(sut.decide({ model: 'busy' }, 'standard')).toBe(OVERLOADED);
    expect(sut.decide({ model: 'busy' }, 'sheddable')).toBe(OVERLOADED);
    criticalWait.queued('busy');
    expect(sut.decide({ model: 'busy' }, 'critical')).toBe(OVERLOADED);
    criticalWait.left('busy');
    criticalWait.ended('busy', 'standard');
    expect(sut.judge('busy', 'critical')).toBe('refuse');
  });

  it('admits everything with --admission-control none', () => {
    expect(make('none').sut.decide({ model: 'busy' })).toBeNull();
  });

  it('admits everything with --admission-control shadow, judging the busy model would-refuse', () => {
    const { sut } = make('shadow');
    expect(sut.decide({ model: 'busy' })).toBeNull();
    expect(sut.judge('busy')).toBe('would-refuse');
    expect(sut.judge('free')).toBe('admit');
    expect(sut.judge('never-seen')).toBe('admit');
  });

  it.each([
    ['token-capacity', 'shadow', null, 'would-refuse'],
    ['token-capacity', 'none', null, 'admit'],
    ['none', 'token-capacity', OVERLOADED, 'refuse'],
    ['shadow', 'token-capacity', OVERLOADED, 'refuse'],
    ['none', null, null, 'admit'],
  ] as const)(
    'with the global flag %s and the model’s own %s, answers %p (%s)',
    (global, own, refusal, verdict) => {
      const { sut, thresholds } = make(global);
      thresholds.setOverride('busy', { admissionControl: own });
      expect(sut.decide({ model: 'busy' })).toBe(refusal);
      expect(sut.judge('busy')).toBe(verdict);
      // The model's own mode is only its own: the other models keep the global flag.
      thresholds.setOverride('free', { admissionControl: own });
      expect(sut.judge('free')).toBe('admit');
    },
  );

  it('refuses every request while draining, not as a rejection', () => {
    const { sut, lifecycle } = make('none');
    lifecycle.startDraining();
    expect(sut.decide({})).toBe(DRAINING);
    expect(DRAINING).toMatchObject({ status: 503, errorType: 'unavailable', rejection: false });
  });
});
