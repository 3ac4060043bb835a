import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { UnparsableError } from '../unparsable.error';

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
  const out = new Map<string, PromSample[]>();
  for (const name of names) out.set(name, []);
  const selected = pickSampleLines(text, names);
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

/**
 * The sample lines of `names`, trimmed, grouped by family in the order of `names` and in the
 * text's order within a family. Searches the text for each name instead of splitting it into
 * lines: only the lines that are kept are ever copied. A sample line is the name at the start
 * of a line (after blanks), followed by `{`, a space or a tab; comments never match.
 */
export function pickSampleLines(text: string, names: readonly string[]): string[] {
  const lines: string[] = [];
  for (const name of names) {
    if (name.length === 0) continue;
    let from = 0;
    for (;;) {
      const at = text.indexOf(name, from);
      if (at === -1) break;
      const next = text.charCodeAt(at + name.length);
      from = at + name.length;
      if (next !== 0x7b /* { */ && next !== 0x20 /* space */ && next !== 0x09 /* tab */) continue;
      if (!atLineStart(text, at)) continue;
      let end = text.indexOf('\n', from);
      if (end === -1) end = text.length;
      lines.push(text.slice(at, end).trim());
      from = end;
    }
  }
  return lines;
}

/** Whether only blanks stand between the line's start and `at`. */
function atLineStart(text: string, at: number): boolean {
  for (let i = at - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 0x0a /* \n */) return true;
    if (!isBlank(c)) return false;
  }
  return true;
}

function isBlank(c: number): boolean {
  // What String.prototype.trim() removes, as the line splitter before did (ASCII part).
  return (
    c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0b || c === 0x0c || c === 0xa0 || c === 0xfeff
  );
}
