import { Logger } from '@nestjs/common';
import { parsedReport } from '@sluice/testkit';
import { AdmissionControl, FrontendConfig } from '../config/frontend-config';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { BusyModels } from './busy-models';

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
