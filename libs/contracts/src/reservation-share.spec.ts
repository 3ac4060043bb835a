import { parseReservationShare, reservationShareWire } from './reservation-share';

describe('parseReservationShare', () => {
  const sut = parseReservationShare;
  const wire = {
    origin: 'replica-a',
    workers: [
      {
        worker_id: 'w-1',
        ranks: [{ dp_rank: 0, decode_blocks: 60, prefill_tokens: 42, waiting: 1 }],
      },
      { worker_id: 'w-2', ranks: [] },
    ],
  };

  it('reads a message and writes it back the same', () => {
    const parsed = sut(wire);
    expect(parsed).toEqual({
      ok: true,
      value: {
        origin: 'replica-a',
        workers: [
          {
            workerId: 'w-1',
            ranks: [{ dpRank: 0, decodeBlocks: 60, prefillTokens: 42, waiting: 1 }],
          },
          { workerId: 'w-2', ranks: [] },
        ],
      },
    });
    if (parsed.ok) expect(reservationShareWire(parsed.value)).toEqual(wire);
  });

  it.each([
    ['not an object', [], 'payload is not a JSON object'],
    ['no origin', { workers: [] }, "'origin'"],
    ['a long origin', { origin: 'x'.repeat(65), workers: [] }, "'origin'"],
    ['no workers', { origin: 'a' }, "'workers'"],
    [
      'a worker id with a newline',
      { origin: 'a', workers: [{ worker_id: 'w\n', ranks: [] }] },
      "'worker_id'",
    ],
    [
      'a negative count',
      {
        origin: 'a',
        workers: [
          {
            worker_id: 'w',
            ranks: [{ dp_rank: 0, decode_blocks: -1, prefill_tokens: 0, waiting: 0 }],
          },
        ],
      },
      "'ranks'",
    ],
    [
      'a rank past the largest dp_size',
      {
        origin: 'a',
        workers: [
          {
            worker_id: 'w',
            ranks: [{ dp_rank: 1024, decode_blocks: 1, prefill_tokens: 0, waiting: 0 }],
          },
        ],
      },
      "'ranks'",
    ],
  ])('refuses %s, whole', (_what, raw, reason) => {
    const parsed = sut(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(reason);
  });
});
