import { BadRequestException, Logger } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { THRESHOLD_KEYS } from '../thresholds/busy-thresholds';
import {
  AppliedChange,
  ChangeOutcomeUnknownError,
  ThresholdRepository,
  ThresholdValues,
  VersionMismatchError,
} from '../thresholds/persistence';
import { ThresholdSyncService } from '../thresholds/threshold-sync.service';
import { ThresholdsService } from '../thresholds/thresholds.service';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';
import { SetThresholdDto } from './dto/set-threshold.dto';
import { ThresholdPreconditionFailedError } from './errors/threshold-precondition-failed.error';
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
  let sync: Record<'markStore' | 'applyLocal' | 'announce' | 'resyncAll' | 'versionOf', jest.Mock>;
  let sut: ThresholdAdminService;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    const versions = new Map<string, string>();
    const config = new FrontendConfig({
      thresholds: { ...NONE, activeDecodeBlocks: 0.9 },
    });
    thresholds = new ThresholdsService(config);
    const registry = {
      modelNames: () => ['served', 'gone'],
      servedModelsVersion: () => 0,
      model: (name: string) => ({ workers: { size: name === 'served' ? 1 : 0 } }),
    } as unknown as WorkerRegistry;
    repository = { applyChange: jest.fn(), listAudit: jest.fn() };
    sync = {
      markStore: jest.fn(),
      applyLocal: jest.fn((model: string, values: ThresholdValues, version: string) => {
        thresholds.setOverride(model, values);
        versions.set(model, version);
      }),
      versionOf: jest.fn((model: string) => versions.get(model) ?? '0'),
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
    const page = sut.page(undefined, 10);
    expect(page.thresholds.map((e) => [e.model, e.active_decode_blocks_threshold])).toEqual([
      ['served', 0.9],
      ['stored', 0.5],
    ]);
    expect(page.next).toBeNull();
  });

  it('pages the list in model order, each model once, with the cursor of the next page', () => {
    for (const m of ['d', 'b', 'served', 'a', 'c']) thresholds.setOverride(m, NONE);
    const first = sut.page(undefined, 2);
    expect(first).toEqual({
      thresholds: [
        expect.objectContaining({ model: 'a' }),
        expect.objectContaining({ model: 'b' }),
      ],
      next: 'b',
    });
    expect(sut.page('b', 2).thresholds.map((e) => e.model)).toEqual(['c', 'd']);
    expect(sut.page('d', 2)).toEqual({
      thresholds: [expect.objectContaining({ model: 'served' })],
      next: null,
    });
  });

  it('lists a model from the moment it gains stored values until it loses them', () => {
    thresholds.setOverride('a', NONE);
    expect(sut.page(undefined, 10).thresholds.map((e) => e.model)).toEqual(['a', 'served']);
    thresholds.setOverride('b', NONE);
    thresholds.setOverride('a', undefined);
    expect(sut.page(undefined, 10).thresholds.map((e) => e.model)).toEqual(['b', 'served']);
    thresholds.replaceOverrides(new Map([['c', NONE]]));
    expect(sut.page(undefined, 10).thresholds.map((e) => e.model)).toEqual(['c', 'served']);
  });

  it('answers a read (only `model`) from memory with its ETag, without touching the store', async () => {
    sync.applyLocal('m', { ...NONE, activeDecodeBlocks: 0.7 }, '41');
    await expect(sut.set(dto({ model: 'm' }), META, false, '"1"')).resolves.toEqual({
      entry: expect.objectContaining({ model: 'm', active_decode_blocks_threshold: 0.7 }),
      etag: '"41"',
    });
    expect((await sut.set(dto({ model: 'never' }), META)).etag).toBe('"0"');
    expect(repository.applyChange).not.toHaveBeenCalled();
  });

  it('stores a change first, then applies it here and announces it to the other replicas', async () => {
    const after = { ...NONE, activeDecodeBlocks: 0.5 };
    const applied = { before: NONE, after, audit: { id: '7' } } as AppliedChange;
    repository.applyChange.mockResolvedValue(applied);
    const answer = await sut.set(dto({ model: 'm', active_decode_blocks_threshold: 0.5 }), META);
    expect(repository.applyChange).toHaveBeenCalledWith(
      'm',
      { activeDecodeBlocks: 0.5 },
      { ...META, reason: undefined },
      { ifMatch: undefined, ttlSecs: undefined },
    );
    expect(sync.markStore).toHaveBeenCalledWith(true);
    expect(sync.applyLocal).toHaveBeenCalledWith('m', after, '7');
    expect(sync.announce).toHaveBeenCalledWith('m');
    expect(answer).toEqual({
      entry: expect.objectContaining({ model: 'm', active_decode_blocks_threshold: 0.5 }),
      etag: '"7"',
    });
  });

  it('hands the store the If-Match condition, the TTL and the reason', async () => {
    const applied = { before: NONE, after: NONE, audit: { id: '9' } } as AppliedChange;
    repository.applyChange.mockResolvedValue(applied);
    await sut.set(
      dto({ model: 'm', waiting_requests_threshold: 2, reason: 'why', ttl_secs: 60 }),
      META,
      false,
      '"8", W/"7"',
    );
    expect(repository.applyChange).toHaveBeenCalledWith(
      'm',
      { waitingRequests: 2 },
      { ...META, reason: 'why' },
      { ifMatch: { versions: ['8'] }, ttlSecs: 60 },
    );
  });

  it('answers 412 when If-Match no longer holds, and serves the state the store reported', async () => {
    const current = { values: { ...NONE, activeDecodeBlocks: 0.3 }, version: '12' };
    repository.applyChange.mockRejectedValue(new VersionMismatchError('m', current));
    const change = dto({ model: 'm', active_decode_blocks_threshold: 0.5 });
    await expect(sut.set(change, META, false, '"11"')).rejects.toThrow(
      ThresholdPreconditionFailedError,
    );
    expect(sync.announce).not.toHaveBeenCalled();
    expect(sut.read('m')).toEqual({
      entry: expect.objectContaining({ active_decode_blocks_threshold: 0.3 }),
      etag: '"12"',
    });
  });

  it('refuses reason or ttl_secs without a threshold to change, and a malformed If-Match, with 400', async () => {
    for (const fields of [{ reason: 'x' }, { ttl_secs: 5 }]) {
      await expect(sut.set(dto({ model: 'm', ...fields }), META)).rejects.toThrow(
        BadRequestException,
      );
    }
    const change = dto({ model: 'm', active_decode_blocks_threshold: 0.5 });
    await expect(sut.set(change, META, false, 'not-a-tag')).rejects.toThrow(BadRequestException);
    expect(repository.applyChange).not.toHaveBeenCalled();
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
      reason: null,
      expiresAt: '2026-12-01T12:00:00.000Z',
    };
    repository.listAudit.mockResolvedValueOnce({ entries: [entry], next: null });
    const page = await sut.audit({ model: 'm' });
    expect(repository.listAudit).toHaveBeenCalledWith({ model: 'm', limit: 50, before: undefined });
    expect(page).toEqual({
      entries: [
        {
          ...{ id: '1', at: 'now', actor: 'a', model: 'm', before: {}, after: {}, source: 's' },
          ...{ reason: null, expires_at: '2026-12-01T12:00:00.000Z' },
        },
      ],
      next: null,
    });
    repository.listAudit.mockRejectedValueOnce(new Error('down'));
    await expect(sut.audit({})).rejects.toThrow(ThresholdStoreUnavailableError);
  });
});
