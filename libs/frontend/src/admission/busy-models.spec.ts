import { Logger } from '@nestjs/common';
import { parsedReport } from '@sluice/testkit';
import { FrontendConfig } from '../config/frontend-config';
import { PRIORITY_CLASSES } from '../config/priority';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { BusyModels } from './busy-models';

const M = 'm';
/** Decode usage `used` of 100 blocks; threshold 0.9: sheddable 0.72, critical 1. */
const report = (id: string, used: number) =>
  parsedReport(id, { model: M, activeDecodeBlocks: used });

describe('BusyModels', () => {
  let registry: WorkerRegistry;
  let sut: BusyModels;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    const config = new FrontendConfig({ thresholds: { activeDecodeBlocks: 0.9 } });
    registry = new WorkerRegistry(config, new ThresholdsService(config));
    sut = new BusyModels(registry);
  });

  const armed = () => PRIORITY_CLASSES.filter((c) => sut.anyFor(c));

  it('knows, per class, whether some model refuses it', () => {
    registry.applyReport(report('w1', 50), 0);
    expect(sut.any).toBe(false);
    registry.applyReport(report('w1', 80), 0);
    expect([sut.any, armed()]).toEqual([true, ['sheddable']]);
    registry.applyReport(report('w1', 95), 0);
    expect(armed()).toEqual(['standard', 'sheddable']);
    registry.applyReport(report('w1', 10), 0);
    expect([sut.any, armed()]).toEqual([false, []]);
  });

  it('clears a class when a free worker joins, and sets it when the last free one goes', () => {
    registry.applyReport(report('w1', 95), 0);
    registry.applyReport(report('w2', 10), 0);
    expect(armed()).toEqual([]);
    registry.removeWorker('w2', 'worker_down');
    expect(armed()).toEqual(['standard', 'sheddable']);
    registry.applyReport(report('w3', 80), 0);
    expect(armed()).toEqual(['sheddable']);
  });
});
