import { BadRequestException } from '@nestjs/common';
import { VersionCondition } from '../thresholds/persistence';

/** The ETag of a model's thresholds: its version, a strong entity tag. */
export function etagOf(version: string): string {
  return `"${version}"`;
}

/** One list element: an entity tag, optionally weak, then a comma or the end (RFC 9110 §8.8.3). */
const ELEMENT = /^[\s,]*(W\/)?"([^"]*)"[ \t]*(?:,|$)/;
const ETAG_CHARS = /^[\x21\x23-\x7e\x80-\xff]*$/;

/**
 * `If-Match` (RFC 9110 §13.1.1) as a condition on the stored version: `*`, or the versions named
 * by its strong entity tags. A weak tag never matches (If-Match compares strongly), nor does a
 * tag that is no version of ours. Anything that is not an entity-tag list is a 400.
 */
export function parseIfMatch(header: string | undefined): VersionCondition | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return { any: true };
  const versions: string[] = [];
  let rest = header;
  while (/[^\s,]/.test(rest)) {
    const m = ELEMENT.exec(rest);
    if (!m || !ETAG_CHARS.test(m[2])) {
      throw new BadRequestException([
        'If-Match must be * or a list of entity tags, e.g. "42" (the ETag of a read)',
      ]);
    }
    if (!m[1]) versions.push(m[2]);
    rest = rest.slice(m[0].length);
  }
  if (versions.length === 0 && !/"/.test(header)) {
    throw new BadRequestException(['If-Match must not be empty']);
  }
  return { versions };
}
