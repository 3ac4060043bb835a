import { Logger } from '@nestjs/common';
import { FAILURE_LOG_INTERVAL_MS, UpstreamFailuresLogger } from './upstream-failures.logger';

describe('UpstreamFailuresLogger', () => {
  let sut: UpstreamFailuresLogger;
  let warn: jest.SpyInstance;
  let now: number;

  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    sut = new UpstreamFailuresLogger();
  });

  afterEach(() => jest.restoreAllMocks());

  it('logs the first failure of a worker at once, with the outcome', () => {
    sut.failed('w-1', 'http://a:1', 'other side closed', 'retried on worker w-2');
    expect(warn).toHaveBeenCalledWith(
      'worker w-1 at http://a:1 failed: other side closed; retried on worker w-2',
    );
  });

  it('counts further failures of the same worker into the next line after the window', () => {
    sut.failed('w-1', 'http://a:1', 'refused', 'answered 502');
    sut.failed('w-1', 'http://a:1', 'refused', 'answered 502');
    sut.failed('w-1', 'http://a:1', 'refused', 'answered 502');
    expect(warn).toHaveBeenCalledTimes(1);
    now += FAILURE_LOG_INTERVAL_MS;
    sut.failed('w-1', 'http://a:1', 'refused', 'answered 502');
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn).toHaveBeenLastCalledWith(
      'worker w-1 at http://a:1 failed: refused; answered 502 (+2 more failures not logged)',
    );
  });

  it('throttles each worker on its own', () => {
    sut.failed('w-1', 'http://a:1', 'refused', 'answered 502');
    sut.failed('w-2', 'http://b:1', 'refused', 'answered 502');
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it('keeps tracking bounded when many workers fail at once', () => {
    for (let i = 0; i < 5000; i++) sut.failed(`w-${i}`, 'http://a:1', 'refused', 'answered 502');
    expect(warn).toHaveBeenCalledTimes(5000);
    expect((sut as unknown as { windows: Map<string, unknown> }).windows.size).toBeLessThanOrEqual(
      1024,
    );
  });
});
