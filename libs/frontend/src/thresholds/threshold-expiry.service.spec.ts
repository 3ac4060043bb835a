import { Logger } from '@nestjs/common';
import { NO_THRESHOLDS } from './busy-thresholds';
import { RevertedChange, ThresholdRepository } from './persistence';
import { ThresholdExpiryService } from './threshold-expiry.service';
import { ThresholdSyncService } from './threshold-sync.service';

const reverted = (model: string, id: string): RevertedChange =>
  ({
    model,
    before: { ...NO_THRESHOLDS, activeDecodeBlocks: 0.5 },
    after: NO_THRESHOLDS,
    audit: { id, reason: 'expiry of the temporary change 1' },
  }) as RevertedChange;

describe('ThresholdExpiryService', () => {
  let repository: { revertDue: jest.Mock };
  let sync: { loadedOnce: boolean; applyLocal: jest.Mock; announce: jest.Mock };
  let sut: ThresholdExpiryService;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(() => {
    repository = { revertDue: jest.fn() };
    sync = { loadedOnce: true, applyLocal: jest.fn(), announce: jest.fn() };
    sut = new ThresholdExpiryService(
      repository as unknown as ThresholdRepository,
      sync as unknown as ThresholdSyncService,
    );
  });

  it('reverts everything due, applies each revert here and announces it to the other replicas', async () => {
    repository.revertDue
      .mockResolvedValueOnce(reverted('a', '10'))
      .mockResolvedValueOnce(reverted('b', '11'))
      .mockResolvedValueOnce(null);
    await sut.poll();
    expect(repository.revertDue).toHaveBeenCalledTimes(3);
    expect(sync.applyLocal.mock.calls).toEqual([
      ['a', NO_THRESHOLDS, '10'],
      ['b', NO_THRESHOLDS, '11'],
    ]);
    expect(sync.announce.mock.calls).toEqual([['a'], ['b']]);
  });

  it('polls one at a time, and not before the stored thresholds are loaded', async () => {
    sync.loadedOnce = false;
    await sut.poll();
    expect(repository.revertDue).not.toHaveBeenCalled();
    sync.loadedOnce = true;
    let finish: (v: null) => void = () => undefined;
    repository.revertDue.mockReturnValueOnce(new Promise((r) => (finish = r)));
    const first = sut.poll();
    const second = sut.poll();
    expect(repository.revertDue).toHaveBeenCalledTimes(1);
    finish(null);
    await Promise.all([first, second]);
  });

  it('keeps polling after the store fails', async () => {
    repository.revertDue.mockRejectedValueOnce(new Error('down'));
    await expect(sut.poll()).resolves.toBeUndefined();
    repository.revertDue.mockResolvedValueOnce(reverted('a', '12')).mockResolvedValueOnce(null);
    await sut.poll();
    expect(sync.applyLocal).toHaveBeenCalledWith('a', NO_THRESHOLDS, '12');
  });

  it('stops polling when the module is destroyed', async () => {
    sut.onModuleDestroy();
    await sut.poll();
    expect(repository.revertDue).not.toHaveBeenCalled();
  });
});
