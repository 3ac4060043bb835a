import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UsageTail } from './tenant-usage';

describe('UsageTail', () => {
  it('passes an answer through whole and settles the usage at its end from its last bytes', async () => {
    const sut = new UsageTail();
    const filler = Buffer.alloc(64 * 1024, 'x');
    const parts = [
      Buffer.from('{"choices":[{"message":{"content":"'),
      ...Array.from({ length: 16 }, () => filler),
      Buffer.from('"}}],"usage":{"prompt_tokens":7,"completion_tokens":11}}'),
    ];
    let passed = 0;
    await pipeline(Readable.from(parts), sut, async (out: AsyncIterable<Buffer>) => {
      for await (const chunk of out) passed += chunk.length;
    });
    const charge = { usage: jest.fn(), dispatched: jest.fn(), refused: jest.fn() };
    sut.settle(charge);
    expect(passed).toBe(parts.reduce((n, p) => n + p.length, 0));
    expect(charge.usage).toHaveBeenCalledWith(7, 11);
    expect((sut as unknown as { bytes: number }).bytes).toBeLessThan(3 * filler.length);
  });

  it('settles with no usage when the answer reports none', async () => {
    const sut = new UsageTail();
    await pipeline(Readable.from([Buffer.from('{"choices":[]}')]), sut, async (out) => {
      for await (const chunk of out as AsyncIterable<Buffer>) void chunk;
    });
    const charge = { usage: jest.fn(), dispatched: jest.fn(), refused: jest.fn() };
    sut.settle(charge);
    expect(charge.usage).toHaveBeenCalledWith(null, null);
  });
});
