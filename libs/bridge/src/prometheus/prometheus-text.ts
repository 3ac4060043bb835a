import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { UnparsableError } from '../engines/unparsable.error';

/** One sample of a wanted family; `value` may be NaN (the adapter decides what it accepts). */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Samples per family name, only for the families asked for. */
export type PromFamilies = ReadonlyMap<string, readonly PromSample[]>;

/**
 * Reads the samples of `names` from Prometheus text. Only the sample lines of those families
 * reach the parser: a malformed line of any other family cannot fail the scrape, and the
 * parser's work is bounded by what the adapter needs, not by what the engine sends. A malformed
 * line of a wanted family makes the whole scrape unparsable.
 */
export function readFamilies(text: string, names: readonly string[]): PromFamilies {
  const selected: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line.length === 0 || line.charCodeAt(0) === 0x23 /* # */) continue;
    if (names.some((n) => isSampleOf(line, n))) selected.push(line);
  }
  const out = new Map<string, PromSample[]>();
  for (const name of names) out.set(name, []);
  if (selected.length === 0) return out;
  let families;
  try {
    // The parser writes a family out when it meets the next line: the last one needs a newline.
    families = parsePrometheusTextFormat(`${selected.join('\n')}\n`);
  } catch (err) {
    throw new UnparsableError(`malformed metric line: ${String(err).slice(0, 200)}`);
  }
  for (const family of families) {
    const list = out.get(family.name);
    if (!list) throw new UnparsableError(`malformed metric line of '${family.name.slice(0, 80)}'`);
    for (const m of family.metrics) {
      const raw = m.value ?? '';
      list.push({
        name: family.name,
        labels: m.labels ?? {},
        value: raw.trim() === '' ? NaN : Number(raw),
      });
    }
  }
  return out;
}

function isSampleOf(line: string, name: string): boolean {
  if (!line.startsWith(name)) return false;
  const next = line.charCodeAt(name.length);
  return next === 0x7b /* { */ || next === 0x20 /* space */ || next === 0x09; /* tab */
}
