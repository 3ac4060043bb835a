import { readFileSync } from 'node:fs';
import { FrontendConfigError } from './frontend-config.error';

/** A line of a config file that holds something, with its 1-based line number. */
export interface ConfigLine {
  readonly text: string;
  readonly line: number;
}

/**
 * The lines of a flag's config file (`--admin-token-file`, `--priority-key-file`): `#` starts a
 * comment, blank lines are skipped, each line trimmed. A file that cannot be read is a usage
 * error naming the flag (`source`) and the path.
 */
export function readConfigLines(path: string, source: string): ConfigLine[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new FrontendConfigError(source, path, `cannot read the file (${code})`);
  }
  return text
    .split(/\r?\n/)
    .map((raw, index) => ({ text: raw.replace(/#.*$/, '').trim(), line: index + 1 }))
    .filter((l) => l.text !== '');
}
