import { ModelEntry } from '../worker-monitor/worker-entry';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { ModelsService } from './models.service';

/** Just enough registry: models by name, each with one live worker. */
function registryOf(names: Set<string>): WorkerRegistry {
  const entry = (name: string): ModelEntry => {
    const model = new ModelEntry(name);
    model.workers.set(`${name}-w`, {} as never);
    return model;
  };
  return {
    modelNames: () => [...names],
    model: (name: string) => (names.has(name) ? entry(name) : undefined),
  } as unknown as WorkerRegistry;
}

describe('ModelsService', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps the first-seen time of a model while the registry knows it', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const names = new Set(['a']);
    const sut = new ModelsService(registryOf(names));
    const first = sut.list().data[0].created;
    jest.setSystemTime(5_000_000);
    expect(sut.list().data[0].created).toBe(first);
  });

  it('forgets models the registry has forgotten, so invented names cannot pile up', () => {
    const names = new Set<string>();
    const sut = new ModelsService(registryOf(names));
    for (let i = 0; i < 5000; i++) {
      names.clear();
      names.add(`invented-${i}`);
      expect(sut.list().data.map((m) => m.id)).toEqual([`invented-${i}`]);
    }
    expect(sut['firstSeen'].size).toBe(1);
  });
});
