import { Logger } from '@nestjs/common';
import { parsedReport } from '@sluice/testkit';
import { AdmissionControl, FrontendConfig } from '../config/frontend-config';
import { PRIORITY_CLASSES } from '../config/priority';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { BusyModels } from './busy-models';

const M = 'm';
/** Decode usage `used` of 100 blocks; threshold 0.9: sheddable 0.72, critical 1. */
const classReport = (id: string, used: number) =>
  parsedReport(id, { model: M, activeDecodeBlocks: used });

describe('BusyModels', () => {
  let registry: WorkerRegistry;
  let sut: BusyModels;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    const config = new FrontendConfig({
      admissionControl: 'token-capacity',
      thresholds: { activeDecodeBlocks: 0.9 },
    });
    const thresholds = new ThresholdsService(config);
    registry = new WorkerRegistry(config, thresholds);
    sut = new BusyModels(registry, thresholds);
  });

  const armed = () => PRIORITY_CLASSES.filter((c) => sut.anyFor(c));

  it('knows, per class, whether some model refuses it', () => {
    registry.applyReport(classReport('w1', 50), 0);
    expect(sut.any).toBe(false);
    registry.applyReport(classReport('w1', 80), 0);
    expect([sut.any, armed()]).toEqual([true, ['sheddable']]);
    registry.applyReport(classReport('w1', 95), 0);
    expect(armed()).toEqual(['standard', 'sheddable']);
    registry.applyReport(classReport('w1', 10), 0);
    expect([sut.any, armed()]).toEqual([false, []]);
  });

  it('clears a class when a free worker joins, and sets it when the last free one goes', () => {
    registry.applyReport(classReport('w1', 95), 0);
    registry.applyReport(classReport('w2', 10), 0);
    expect(armed()).toEqual([]);
    registry.removeWorker('w2', 'worker_down');
    expect(armed()).toEqual(['standard', 'sheddable']);
    registry.applyReport(classReport('w3', 80), 0);
    expect(armed()).toEqual(['sheddable']);
  });
});

describe('BusyModels (arms the byte prescan)', () => {
  let thresholds: ThresholdsService;
  let registry: WorkerRegistry;

  const build = (admissionControl: AdmissionControl): BusyModels => {
    const config = new FrontendConfig({
      admissionControl,
      thresholds: { activeDecodeBlocks: 0.5 },
    });
    thresholds = new ThresholdsService(config);
    registry = new WorkerRegistry(config, thresholds);
    return new BusyModels(registry, thresholds);
  };
  const report = (used: number): void => {
    registry.applyReport(parsedReport('w', { model: 'm', activeDecodeBlocks: used }), 0);
  };

  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it('holds a model whose every worker is busy while it enforces, and lets it go when freed', () => {
    const sut = build('token-capacity');
    report(90);
    expect(sut.any).toBe(true);
    report(10);
    expect(sut.any).toBe(false);
  });

  it('never holds a model in shadow or none mode, so the prescan stays disarmed', () => {
    for (const mode of ['shadow', 'none'] as const) {
      const sut = build(mode);
      report(90);
      expect(registry.model('m')?.allBusy).toBe(true);
      expect(sut.any).toBe(false);
    }
  });

  it('follows a change of the model’s own mode at once, with no new report', () => {
    const sut = build('none');
    report(90);
    thresholds.setOverride('m', { admissionControl: 'token-capacity' });
    expect(sut.any).toBe(true);
    thresholds.setOverride('m', { admissionControl: 'shadow' });
    expect(sut.any).toBe(false);
    thresholds.replaceOverrides(new Map([['m', { admissionControl: 'token-capacity' }]]));
    expect(sut.any).toBe(true);
    thresholds.setOverride('m', undefined);
    expect(sut.any).toBe(false);
  });
});
