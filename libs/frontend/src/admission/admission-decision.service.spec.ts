import { FrontendConfig } from '../config/frontend-config';
import { PRIORITY_CLASSES, PriorityClass } from '../config/priority';
import { ModelEntry, WorkerEntry } from '../worker-monitor/worker-entry';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { LifecycleService } from './lifecycle.service';
import { AdmissionDecision } from './admission-decision.service';
import { DRAINING, OVERLOADED } from './refusal';

/**
 * A registry with one model, `busy`, whose only worker is busy for every class, one, `free`,
 * with a free one, and one, `critical-only`, whose only worker is free for critical requests only.
 */
function registry(): WorkerRegistry {
  const freeFor: Record<string, readonly PriorityClass[]> = {
    busy: [],
    free: PRIORITY_CLASSES,
    'critical-only': ['critical'],
  };
  const models = new Map<string, ModelEntry>();
  for (const [name, classes] of Object.entries(freeFor)) {
    const model = new ModelEntry(name);
    const worker = new WorkerEntry(`${name}-w`, name, 'http://127.0.0.1:9', 1, 0);
    model.workers.set(worker.id, worker);
    for (const c of classes) model.markFree(worker, c);
    models.set(name, model);
  }
  return { model: (name: string) => models.get(name) } as unknown as WorkerRegistry;
}

function make(admissionControl: 'token-capacity' | 'none'): {
  sut: AdmissionDecision;
  lifecycle: LifecycleService;
} {
  const lifecycle = new LifecycleService();
  const config = new FrontendConfig({ admissionControl });
  return { sut: new AdmissionDecision(config, registry(), lifecycle), lifecycle };
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
    expect(sut.decide(body, 'standard')).toBe(OVERLOADED);
    expect(sut.decide(body, 'sheddable')).toBe(OVERLOADED);
    // Without a class, a request is standard.
    expect(sut.decide(body)).toBe(OVERLOADED);
    for (const c of PRIORITY_CLASSES) {
      expect(sut.decide({ model: 'free' }, c)).toBeNull();
      expect(sut.decide({ model: 'busy' }, c)).toBe(OVERLOADED);
    }
  });

  it('admits everything with --admission-control none', () => {
    expect(make('none').sut.decide({ model: 'busy' })).toBeNull();
  });

  it('refuses every request while draining, not as a rejection', () => {
    const { sut, lifecycle } = make('none');
    lifecycle.startDraining();
    expect(sut.decide({})).toBe(DRAINING);
    expect(DRAINING).toMatchObject({ status: 503, errorType: 'unavailable', rejection: false });
  });
});
