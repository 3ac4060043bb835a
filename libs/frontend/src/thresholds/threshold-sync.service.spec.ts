import { Logger } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';
import { THRESHOLD_KEYS } from './busy-thresholds';
import { ThresholdRepository, ThresholdValues } from './persistence';
import { ThresholdDatabase } from './persistence/threshold-database.service';
import { ThresholdSyncService } from './threshold-sync.service';
import { ThresholdsService } from './thresholds.service';

const NONE = Object.fromEntries(THRESHOLD_KEYS.map((k) => [k, null])) as unknown as ThresholdValues;
const decode = (v: number): ThresholdValues => ({ ...NONE, activeDecodeBlocks: v });

describe('ThresholdSyncService', () => {
  let thresholds: ThresholdsService;
  let repository: { loadState: jest.Mock; loadStates: jest.Mock };
  let storeUp: { set: jest.Mock };
  let published: Array<{ subject: string; payload: object }>;
  let publish: jest.Mock;
  let sut: ThresholdSyncService;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    const config = new FrontendConfig({ namespace: 'ns', thresholds: decode(0.9) });
    thresholds = new ThresholdsService(config);
    repository = { loadState: jest.fn(), loadStates: jest.fn() };
    storeUp = { set: jest.fn() };
    published = [];
    publish = jest.fn((subject: string, payload: object) => published.push({ subject, payload }));
    sut = new ThresholdSyncService(
      config,
      thresholds,
      repository as unknown as ThresholdRepository,
      {} as ThresholdDatabase,
      storeUp as unknown as Gauge,
      { publish, close: () => Promise.resolve() },
    );
  });

  it('announces a change on the bus with its own origin, which it then ignores when it hears it', async () => {
    sut.announce('m');
    expect(published).toEqual([
      {
        subject: 'namespace.ns.busy_threshold_changed',
        payload: { model: 'm', origin: expect.any(String) },
      },
    ]);
    await sut.onPeerChange(published[0].payload);
    expect(repository.loadState).not.toHaveBeenCalled();
  });

  it('keeps the change when the bus cannot take the announcement (peers resync)', () => {
    publish.mockImplementation(() => {
      throw new Error('closed');
    });
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      sut.announce('m'); // a throw here would fail the write that stored the change
      expect(publish).toHaveBeenCalledTimes(1);
      // Said, not swallowed: the operator learns that peers wait for their resync.
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining("could not announce the change of 'm'"),
      );
      expect(repository.loadState).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it("applies a peer's change from the database with its version, and clears what the database no longer holds", async () => {
    repository.loadState.mockResolvedValueOnce({ values: decode(0.5), version: '12' });
    await sut.onPeerChange({ model: 'm', origin: 'other' });
    expect(thresholds.effective('m').activeDecodeBlocks).toBe(0.5);
    expect(sut.versionOf('m')).toBe('12');
    repository.loadState.mockResolvedValueOnce({ values: NONE, version: '13' });
    await sut.onPeerChange({ model: 'm', origin: 'other' });
    expect(thresholds.effective('m').activeDecodeBlocks).toBe(0.9);
    expect(sut.versionOf('m')).toBe('13');
    repository.loadState.mockResolvedValueOnce(undefined);
    await sut.onPeerChange({ model: 'm', origin: 'other' });
    expect(sut.versionOf('m')).toBe('0');
  });

  it('never lets a peer answer that arrives late replace a newer state', async () => {
    sut.applyLocal('m', decode(0.6), '20');
    repository.loadState.mockResolvedValueOnce({ values: decode(0.4), version: '19' });
    await sut.onPeerChange({ model: 'm', origin: 'other' });
    expect(thresholds.effective('m').activeDecodeBlocks).toBe(0.6);
    expect(sut.versionOf('m')).toBe('20');
  });

  it('costs no query for a model name no replica could have stored', async () => {
    await sut.onPeerChange({ model: '', origin: 'other' });
    await sut.onPeerChange({ model: 'x'.repeat(300), origin: 'other' });
    await sut.onPeerChange('garbage');
    expect(repository.loadState).not.toHaveBeenCalled();
  });

  it('never lets an older local write win over a newer one', () => {
    expect(sut.versionOf('m')).toBe('0');
    sut.applyLocal('m', decode(0.6), '10');
    sut.applyLocal('m', decode(0.4), '9');
    expect(thresholds.effective('m').activeDecodeBlocks).toBe(0.6);
    expect(sut.versionOf('m')).toBe('10');
  });

  it('resyncs everything stored, drops what is gone, and keeps the last values while the store is down', async () => {
    thresholds.setOverride('gone', decode(0.1));
    sut.applyLocal('gone-too', NONE, '3');
    repository.loadStates.mockResolvedValueOnce(
      new Map([
        ['m', { values: decode(0.3), version: '5' }],
        ['cleared', { values: NONE, version: '7' }],
      ]),
    );
    expect(sut.loadedOnce).toBe(false);
    await sut.resyncAll();
    expect(sut.loadedOnce).toBe(true);
    expect(thresholds.modelsWithOverrides()).toEqual(['m']);
    expect([sut.versionOf('m'), sut.versionOf('cleared'), sut.versionOf('gone-too')]).toEqual([
      '5',
      '7',
      '0',
    ]);
    expect(storeUp.set).toHaveBeenLastCalledWith(1);
    repository.loadStates.mockRejectedValueOnce(new Error('down'));
    await sut.resyncAll();
    expect(storeUp.set).toHaveBeenLastCalledWith(0);
    expect(thresholds.effective('m').activeDecodeBlocks).toBe(0.3);
  });
});
