import { NO_THRESHOLDS } from '../busy-thresholds';
import { revertAt, schedule, takeDue } from './pending-reverts';
import { ThresholdValues } from './threshold.repository';

const at = (s: number) => new Date(Date.UTC(2026, 11, 1, 12, 0, s));
const values = (v: Partial<ThresholdValues>): ThresholdValues => ({ ...NO_THRESHOLDS, ...v });

describe('pending reverts', () => {
  const before = values({ activeDecodeBlocks: 0.9, waitingRequests: 4 });

  it('schedules the keys a temporary change sets, each back to its value from before', () => {
    const sut = schedule(null, { activeDecodeBlocks: 0.5, activePrefillTokens: 100 }, before, {
      audit: '7',
      at: at(10),
    });
    expect(sut).toEqual({
      active_decode_blocks_threshold: { restore: 0.9, at: at(10).toISOString(), audit: '7' },
      active_prefill_tokens_threshold: { restore: null, at: at(10).toISOString(), audit: '7' },
    });
    expect(revertAt(sut)).toEqual(at(10));
  });

  it('drops the pending revert of a key a lasting change sets, and keeps the others', () => {
    const pending = schedule(null, { activeDecodeBlocks: 0.5, waitingRequests: 9 }, before, {
      audit: '7',
      at: at(10),
    });
    const sut = schedule(pending, { activeDecodeBlocks: 0.6 }, values({}), null);
    expect(Object.keys(sut ?? {})).toEqual(['waiting_requests_threshold']);
    expect(schedule(sut, { waitingRequests: null }, values({}), null)).toBeNull();
  });

  it('keeps the value from before the first of several temporary changes of a key, with the newest expiry', () => {
    const first = schedule(null, { activeDecodeBlocks: 0.5 }, before, { audit: '7', at: at(60) });
    const second = schedule(
      first,
      { activeDecodeBlocks: 0.4 },
      values({ activeDecodeBlocks: 0.5 }),
      {
        audit: '8',
        at: at(5),
      },
    );
    expect(second).toEqual({
      active_decode_blocks_threshold: { restore: 0.9, at: at(5).toISOString(), audit: '8' },
    });
  });

  it('takes what is due as one change, and leaves what is not', () => {
    let pending = schedule(null, { activeDecodeBlocks: 0.5 }, before, { audit: '7', at: at(10) });
    pending = schedule(pending, { waitingRequests: 1 }, before, { audit: '8', at: at(20) });
    expect(takeDue(pending, at(9))).toEqual({ patch: {}, audits: [], remaining: pending });
    const due = takeDue(pending, at(10));
    expect(due.patch).toEqual({ activeDecodeBlocks: 0.9 });
    expect(due.audits).toEqual(['7']);
    expect(revertAt(due.remaining)).toEqual(at(20));
    expect(takeDue(due.remaining, at(30))).toEqual({
      patch: { waitingRequests: 4 },
      audits: ['8'],
      remaining: null,
    });
  });

  it('reads a stored object defensively: unknown keys and broken entries are ignored', () => {
    const stored = {
      gone_threshold: { restore: 1, at: at(1).toISOString(), audit: '1' },
      active_decode_blocks_threshold: { restore: 0.2, at: 'not a time', audit: '2' },
      waiting_requests_threshold: { restore: 3, at: at(2).toISOString(), audit: '3' },
    } as never;
    expect(revertAt(stored)).toEqual(at(2));
    expect(takeDue(stored, at(5))).toEqual({
      patch: { waitingRequests: 3 },
      audits: ['3'],
      remaining: null,
    });
    expect(revertAt(null)).toBeNull();
  });
});
