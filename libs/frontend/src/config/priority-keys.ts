import { readConfigLines } from './config-file';
import { FrontendConfigError } from './frontend-config.error';
import { PRIORITY_CLASSES, PriorityClass } from './priority';

/** An API key and the highest priority class its requests may have. */
export interface PriorityKey {
  readonly key: string;
  readonly max: PriorityClass;
}

/**
 * `--priority-key-file FILE`: one `CLASS:API_KEY` a line (`#` comments, blank lines ignored),
 * read once at start. Key values never reach an error message.
 */
export function readPriorityKeys(path: string, source: string): PriorityKey[] {
  const keys: PriorityKey[] = [];
  const seen = new Set<string>();
  for (const { text: line, line: number } of readConfigLines(path, source)) {
    const where = `${path}:${number}`;
    const i = line.indexOf(':');
    const max = line.slice(0, Math.max(i, 0)) as PriorityClass;
    const key = line.slice(i + 1);
    if (!PRIORITY_CLASSES.includes(max) || key === '' || /\s/.test(key)) {
      throw new FrontendConfigError(
        source,
        max && PRIORITY_CLASSES.includes(max) ? `${where} ${max}:<hidden>` : `${where} <hidden>`,
        `expected CLASS:API_KEY lines, CLASS one of ${PRIORITY_CLASSES.join(', ')}, the key without spaces`,
      );
    }
    if (seen.has(key)) {
      throw new FrontendConfigError(source, `${where} ${max}:<hidden>`, 'this key is listed twice');
    }
    seen.add(key);
    keys.push({ key, max });
  }
  return keys;
}
