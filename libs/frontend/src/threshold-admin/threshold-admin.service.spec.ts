import { Logger } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { THRESHOLD_KEYS } from '../thresholds/busy-thresholds';
import {
  AppliedChange,
  ChangeOutcomeUnknownError,
  ThresholdRepository,
  ThresholdValues,
} from '../thresholds/persistence';
import { ThresholdSyncService } from '../thresholds/threshold-sync.service';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { SetThresholdDto } from './dto/set-threshold.dto';
import {
  ThresholdChangeUnconfirmedError,
  ThresholdStoreUnavailableError,
} from './errors/threshold-store-unavailable.error';
import { ThresholdAdminService } from './threshold-admin.service';

const NONE = Object.fromEntries(THRESHOLD_KEYS.map((k) => [k, null])) as unknown as ThresholdValues;
const META = { actor: 'alice', source: '127.0.0.1', requestId: null };

const dto = (fields: Record<string, unknown>): SetThresholdDto =>
  Object.assign(new SetThresholdDto(), fields);

describe('ThresholdAdminService', () => {
  let thresholds: ThresholdsService;
  let repository: { applyChange: jest.Mock; listAudit: jest.Mock };
  let sync: Record<'markStore' | 'applyLocal' | 'announce' | 'resyncAll', jest.Mock>;
  let sut: ThresholdAdminService;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    const config = new FrontendConfig({
      thresholds: { ...NONE, activeDecodeBlocks: 0.9 },
    });
    thresholds = new ThresholdsService(config);
    const registry = {
      modelNames: () => ['served', 'gone'],
      model: (name: string) => ({ workers: { size: name === 'served' ? 1 : 0 } }),
    } as unknown as WorkerRegistry;
    repository = { applyChange: jest.fn(), listAudit: jest.fn() };
    sync = {
      markStore: jest.fn(),
      applyLocal: jest.fn((model: string, values: ThresholdValues) =>
        thresholds.setOverride(model, values),
      ),
      announce: jest.fn(),
      resyncAll: jest.fn(() => Promise.resolve()),
    };
    sut = new ThresholdAdminService(
      thresholds,
      registry,
      repository as unknown as ThresholdRepository,
      sync as unknown as ThresholdSyncService,
    );
  });

  it('lists models with live workers or stored values, sorted, with their effective values', () => {
    thresholds.setOverride('stored', { ...NONE, activeDecodeBlocks: 0.5 });
    expect(sut.list().map((e) => [e.model, e.active_decode_blocks_threshold])).toEqual([
      ['served', 0.9],
      ['stored', 0.5],
    ]);
  });

  it('answers a read (only `model`) from memory, without touching the store', async () => {
    await expect(sut.set(dto({ model: 'm' }), META)).resolves.toMatchObject({
      model: 'm',
      active_decode_blocks_threshold: 0.9,
    });
    expect(repository.applyChange).not.toHaveBeenCalled();
  });

  it('stores a change first, then applies it here and announces it to the other replicas', async () => {
    const after = { ...NONE, activeDecodeBlocks: 0.5 };
    const applied = { before: NONE, after, audit: { id: '7' } } as AppliedChange;
    repository.applyChange.mockResolvedValue(applied);
    const entry = await sut.set(dto({ model: 'm', active_decode_blocks_threshold: 0.5 }), META);
    expect(repository.applyChange).toHaveBeenCalledWith('m', { activeDecodeBlocks: 0.5 }, META);
    expect(sync.markStore).toHaveBeenCalledWith(true);
    expect(sync.applyLocal).toHaveBeenCalledWith('m', after, '7');
    expect(sync.announce).toHaveBeenCalledWith('m');
    expect(entry).toMatchObject({ model: 'm', active_decode_blocks_threshold: 0.5 });
  });

  it('refuses with 503 when the store fails, changing nothing, and names the cause only to an admin', async () => {
    repository.applyChange.mockRejectedValue(new Error('connection to db.internal refused'));
    const change = dto({ model: 'm', active_decode_blocks_threshold: 0.5 });
    await expect(sut.set(change, META)).rejects.toThrow(ThresholdStoreUnavailableError);
    await expect(sut.set(change, META)).rejects.not.toThrow(/db\.internal/);
    await expect(sut.set(change, META, true)).rejects.toThrow(/db\.internal/);
    expect(sync.markStore).toHaveBeenLastCalledWith(false);
    expect(sync.applyLocal).not.toHaveBeenCalled();
    expect(thresholds.effective('m').activeDecodeBlocks).toBe(0.9);
  });

  it('says a change is unconfirmed when the COMMIT got no answer, and resyncs', async () => {
    repository.applyChange.mockRejectedValue(new ChangeOutcomeUnknownError(new Error('timeout')));
    await expect(
      sut.set(dto({ model: 'm', active_decode_blocks_threshold: 0.5 }), META),
    ).rejects.toThrow(ThresholdChangeUnconfirmedError);
    expect(sync.resyncAll).toHaveBeenCalled();
  });

  it('reads an audit page, and refuses with 503 when the store cannot answer', async () => {
    const entry = {
      id: '1',
      at: 'now',
      actor: 'a',
      model: 'm',
      before: {},
      after: {},
      source: 's',
      requestId: 'r',
    };
    repository.listAudit.mockResolvedValueOnce({ entries: [entry], next: null });
    const page = await sut.audit({ model: 'm' });
    expect(repository.listAudit).toHaveBeenCalledWith({ model: 'm', limit: 50, before: undefined });
    expect(page).toEqual({
      entries: [{ id: '1', at: 'now', actor: 'a', model: 'm', before: {}, after: {}, source: 's' }],
      next: null,
    });
    repository.listAudit.mockRejectedValueOnce(new Error('down'));
    await expect(sut.audit({})).rejects.toThrow(ThresholdStoreUnavailableError);
  });
});
