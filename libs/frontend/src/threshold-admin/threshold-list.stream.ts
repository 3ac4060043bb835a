import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ThresholdEntryDto } from '../thresholds/dto/threshold-entry.dto';

/** Entries per piece of the whole list: what one answer builds at a time. */
export const LIST_PIECE = 1000;

/**
 * The whole list (`{"thresholds":[…]}`) of the sorted `models`, written piece by piece as the
 * client reads it, so that an answer holds one piece of text in memory and other requests
 * (`/live`) run between pieces. Each entry has the values in force when its piece is written.
 */
export function wholeList(
  models: readonly string[],
  entry: (model: string) => ThresholdEntryDto,
): Readable {
  async function* pieces(): AsyncGenerator<string> {
    yield '{"thresholds":[';
    for (let at = 0; at < models.length; at += LIST_PIECE) {
      if (at > 0) await nextTurn();
      const piece = models.slice(at, at + LIST_PIECE).map((m) => JSON.stringify(entry(m)));
      yield (at > 0 ? ',' : '') + piece.join(',');
    }
    yield ']}';
  }
  return Readable.from(pieces(), { highWaterMark: 1 });
}
