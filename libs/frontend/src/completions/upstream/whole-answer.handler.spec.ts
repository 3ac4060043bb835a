import { errors as undiciErrors } from 'undici';
import {
  AnswerTooLargeError,
  MidAnswerError,
  STREAM_MIN_BYTES,
  StreamedAnswer,
  UnaryAnswer,
  WholeAnswerHandler,
} from './whole-answer.handler';

function handler(maxBytes: number, timeoutMs = 0) {
  const abort = jest.fn<void, [Error | undefined]>();
  let result: UnaryAnswer | Error | undefined;
  const sut = new WholeAnswerHandler(
    (answer) => (result = answer),
    (err) => (result = err),
    maxBytes,
    timeoutMs,
  );
  sut.onConnect(abort);
  // undici reports the abort back through onError with the error it was given.
  abort.mockImplementation((err) => sut.onError(err ?? new Error('aborted')));
  return { sut, abort, result: () => result };
}

/** The largest answer read whole although its length is declared. */
const LENGTH_SMALL = STREAM_MIN_BYTES;

const header = (name: string, value: string): Buffer[] => [Buffer.from(name), Buffer.from(value)];

describe('WholeAnswerHandler', () => {
  it('reads an answer up to the cap whole', () => {
    const { sut, result } = handler(10);
    sut.onHeaders(200, header('content-type', 'application/json'));
    expect(sut.onData(Buffer.from('12345'))).toBe(true);
    expect(sut.onData(Buffer.from('67890'))).toBe(true);
    sut.onComplete();
    expect(result()).toEqual({
      statusCode: 200,
      contentType: 'application/json',
      body: Buffer.from('1234567890'),
    });
  });

  it('aborts the request at the first byte beyond the cap and keeps nothing', () => {
    const { sut, abort, result } = handler(10);
    sut.onHeaders(200, []);
    sut.onData(Buffer.from('12345'));
    expect(sut.onData(Buffer.from('678901'))).toBe(false);
    expect(abort).toHaveBeenCalledTimes(1);
    const err = result();
    expect(err).toBeInstanceOf(MidAnswerError);
    expect((err as MidAnswerError).cause).toBeInstanceOf(AnswerTooLargeError);
    expect((sut as unknown as { chunks: Buffer[] }).chunks).toEqual([]);
  });

  it('refuses a declared Content-Length beyond the cap before reading the body', () => {
    const { sut, abort, result } = handler(10);
    expect(sut.onHeaders(500, header('Content-Length', '11'))).toBe(false);
    expect(abort).toHaveBeenCalledTimes(1);
    expect((result() as MidAnswerError).cause).toBeInstanceOf(AnswerTooLargeError);
  });

  describe('an answer of a declared length above STREAM_MIN_BYTES and within the cap', () => {
    const LENGTH = STREAM_MIN_BYTES + 10;
    const first = Buffer.alloc(LENGTH - 5, 'a');
    const last = Buffer.from('67890');

    it('is handed on as a stream at its first byte, and ends at its last', async () => {
      const { sut, result } = handler(LENGTH);
      sut.onHeaders(200, header('content-length', String(LENGTH)));
      expect(result()).toBeUndefined();
      sut.onData(first);
      const answer = result() as StreamedAnswer;
      expect(answer).toMatchObject({ statusCode: 200, length: LENGTH });
      sut.onData(last);
      sut.onComplete();
      const read: Buffer[] = [];
      for await (const chunk of answer.body) read.push(chunk as Buffer);
      expect(Buffer.concat(read)).toEqual(Buffer.concat([first, last]));
    });

    it('fails its stream with MidAnswerError when the worker ends it short', async () => {
      const { sut, result } = handler(LENGTH);
      sut.onHeaders(200, header('content-length', String(LENGTH)));
      sut.onData(Buffer.from('12345'));
      sut.onError(new Error('other side closed'));
      const answer = result() as StreamedAnswer;
      await expect(answer.body.toArray()).rejects.toBeInstanceOf(MidAnswerError);
    });

    it('pauses the worker while its reader is behind, and resumes it when read', () => {
      const { sut, result } = handler(1024 * 1024);
      const resume = jest.fn();
      sut.onHeaders(200, header('content-length', String(1024 * 1024)), resume);
      expect(sut.onData(Buffer.alloc(512 * 1024))).toBe(false);
      expect(resume).not.toHaveBeenCalled();
      (result() as StreamedAnswer).body.read();
      expect(resume).toHaveBeenCalledTimes(1);
    });

    it('aborts the request when its reader goes away', () => {
      const { sut, abort, result } = handler(LENGTH);
      sut.onHeaders(200, header('content-length', String(LENGTH)));
      sut.onData(Buffer.from('12345'));
      (result() as StreamedAnswer).body.destroy();
      expect(abort).toHaveBeenCalledTimes(1);
    });

    it('is read whole when it is an error answer', () => {
      const { sut, result } = handler(LENGTH);
      sut.onHeaders(400, header('content-length', '5'));
      sut.onData(Buffer.from('12345'));
      expect(result()).toBeUndefined();
      sut.onComplete();
      expect(result()).toMatchObject({ statusCode: 400, body: Buffer.from('12345') });
    });
  });

  it('reads a declared length up to STREAM_MIN_BYTES whole, as one of unknown length', () => {
    const { sut, result } = handler(LENGTH_SMALL);
    sut.onHeaders(200, header('content-length', String(LENGTH_SMALL)));
    sut.onData(Buffer.alloc(LENGTH_SMALL, 'b'));
    expect(result()).toBeUndefined();
    sut.onComplete();
    expect(result()).toEqual({
      statusCode: 200,
      contentType: undefined,
      body: Buffer.alloc(LENGTH_SMALL, 'b'),
    });
  });

  describe("timeouts (undici's headersTimeout and bodyTimeout, kept by the handler)", () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('fails with HeadersTimeoutError when no status line comes in time', () => {
      const { abort, result } = handler(10, 1000);
      jest.advanceTimersByTime(999);
      expect(abort).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1);
      expect(abort).toHaveBeenCalledTimes(1);
      expect(result()).toBeInstanceOf(undiciErrors.HeadersTimeoutError);
    });

    it('waits the whole timeout again between body chunks, then fails with BodyTimeoutError', () => {
      const { sut, abort, result } = handler(100, 1000);
      jest.advanceTimersByTime(900);
      sut.onHeaders(200, []);
      jest.advanceTimersByTime(900);
      sut.onData(Buffer.from('12345'));
      jest.advanceTimersByTime(900);
      expect(abort).not.toHaveBeenCalled();
      jest.advanceTimersByTime(100);
      const err = result() as MidAnswerError;
      expect(err).toBeInstanceOf(MidAnswerError);
      expect(err.cause).toBeInstanceOf(undiciErrors.BodyTimeoutError);
    });

    it('leaves no timer behind once the answer is read, or the request aborted', () => {
      const read = handler(100, 1000);
      read.sut.onHeaders(200, []);
      read.sut.onComplete();
      const aborted = handler(100, 1000);
      aborted.sut.abort();
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(5000);
      expect(read.abort).not.toHaveBeenCalled();
      expect(read.result()).toMatchObject({ statusCode: 200 });
      expect(aborted.abort).toHaveBeenCalledTimes(1);
      expect(aborted.result()).toBeInstanceOf(undiciErrors.RequestAbortedError);
    });

    it('keeps no timer with a timeout of 0', () => {
      handler(100, 0);
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});
