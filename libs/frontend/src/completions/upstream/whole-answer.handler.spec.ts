import {
  AnswerTooLargeError,
  MidAnswerError,
  WholeAnswer,
  WholeAnswerHandler,
} from './whole-answer.handler';

function handler(maxBytes: number) {
  const abort = jest.fn<void, [Error | undefined]>();
  let result: WholeAnswer | Error | undefined;
  const sut = new WholeAnswerHandler(
    (answer) => (result = answer),
    (err) => (result = err),
    maxBytes,
  );
  sut.onConnect(abort);
  // undici reports the abort back through onError with the error it was given.
  abort.mockImplementation((err) => sut.onError(err ?? new Error('aborted')));
  return { sut, abort, result: () => result };
}

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
});
