import { WorkerEntry } from '../../worker-monitor/worker-entry';
import { noPeerReservations } from '../../worker-monitor/reservations';
import { ModelRoute, pickWorker } from './worker-picker';
import { WorkerTraffic } from './worker-traffic';

const traffic = new WorkerTraffic();

const worker = (id: string, inflightPromptTokens = 0, kv = 0): WorkerEntry => {
  const w = new WorkerEntry(id, 'm', `http://${id}`, 1, 0);
  traffic.of(w).promptTokens = inflightPromptTokens;
  w.ranks.set(0, {
    activeDecodeBlocks: kv,
    kvTotalBlocks: 100,
    activePrefillTokens: 0,
    maxNumBatchedTokens: undefined,
    prefillReported: true,
    seq: undefined,
    publisher: '',
    receivedMs: 0,
    rivals: undefined,
    busyFor: { critical: false, standard: false, sheddable: false },
    heldUntil: { critical: 0, standard: 0, sheddable: 0 },
    reserved: w.reservations.openRank(),
    peers: noPeerReservations(),
  });
  return w;
};

describe('pickWorker', () => {
  const sut = pickWorker;
  let model: ModelRoute;
  let a: WorkerEntry;
  let b: WorkerEntry;
  let c: WorkerEntry;

  beforeEach(() => {
    model = { cursor: 0, traffic };
    [a, b, c] = [worker('a'), worker('b'), worker('c')];
  });

  const pickIds = (n: number, run: () => WorkerEntry | undefined): Array<string | undefined> =>
    Array.from({ length: n }, () => run()?.id);

  it.each(['round-robin', 'random', 'least-loaded'] as const)(
    '%s returns undefined without candidates',
    (mode) => {
      expect(sut(mode, model, [], null)).toBeUndefined();
    },
  );

  describe('round-robin', () => {
    it('cycles over the candidates in order', () => {
      const picks = pickIds(7, () => sut('round-robin', model, [a, b, c], null));
      expect(picks).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a']);
    });

    it('skips ineligible workers and moves on to the next one', () => {
      const notB = (w: WorkerEntry): boolean => w !== b;
      const picks = pickIds(6, () => sut('round-robin', model, [a, b, c], notB));
      expect(picks).toEqual(['a', 'c', 'c', 'a', 'c', 'c']);
    });

    it('never returns the excluded worker', () => {
      const picks = pickIds(6, () => sut('round-robin', model, [a, b], null, new Set([a])));
      expect(picks).toEqual(['b', 'b', 'b', 'b', 'b', 'b']);
    });

    it('never returns any of several excluded workers (a request retried twice)', () => {
      const picks = pickIds(6, () => sut('round-robin', model, [a, b, c], null, new Set([a, c])));
      expect(picks).toEqual(['b', 'b', 'b', 'b', 'b', 'b']);
    });

    it('returns undefined when no candidate is eligible', () => {
      expect(sut('round-robin', model, [a, b], () => false)).toBeUndefined();
      expect(sut('round-robin', model, [a], null, new Set([a]))).toBeUndefined();
    });
  });

  describe('random', () => {
    afterEach(() => jest.restoreAllMocks());

    it('only ever picks among the candidates, reaching each of them', () => {
      const picks = new Set(pickIds(300, () => sut('random', model, [a, b, c], null)));
      expect([...picks].sort()).toEqual(['a', 'b', 'c']);
    });

    it('picks the candidate at the random position', () => {
      jest.spyOn(Math, 'random').mockReturnValue(0.5);
      expect(sut('random', model, [a, b, c], null)).toBe(b);
    });

    it('scans on to an eligible candidate when the random one is filtered out', () => {
      jest.spyOn(Math, 'random').mockReturnValue(0.99);
      expect(sut('random', model, [a, b, c], (w) => w !== c)).toBe(a);
      expect(sut('random', model, [a, b, c], null, new Set([c]))).toBe(a);
    });

    it('returns undefined when no candidate is eligible', () => {
      expect(sut('random', model, [a, b, c], () => false)).toBeUndefined();
    });
  });

  describe('least-loaded', () => {
    it('picks the worker with the fewest prompt tokens in flight', () => {
      const busy = worker('busy', 500);
      const idle = worker('idle', 20, 99);
      const mid = worker('mid', 100);
      expect(sut('least-loaded', model, [busy, idle, mid], null)).toBe(idle);
    });

    it('breaks a tie on in-flight tokens by reported KV usage', () => {
      const full = worker('full', 10, 90);
      const empty = worker('empty', 10, 5);
      expect(sut('least-loaded', model, [full, empty], null)).toBe(empty);
    });

    it('ignores ineligible and excluded workers even if they are the least loaded', () => {
      const idle = worker('idle', 0);
      const other = worker('other', 50);
      const third = worker('third', 80);
      expect(sut('least-loaded', model, [idle, other, third], (w) => w !== idle)).toBe(other);
      expect(sut('least-loaded', model, [idle, other, third], null, new Set([idle]))).toBe(other);
    });

    it('returns undefined when no candidate is eligible', () => {
      expect(sut('least-loaded', model, [a, b], () => false)).toBeUndefined();
    });
  });
});
