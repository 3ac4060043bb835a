import { envName, Flag, FlagTable } from './flag-table';

export interface UsageText {
  /** The first line(s): `usage: node dist/apps/worker/main.js [flags]`. */
  readonly synopsis: string;
  /** Lines printed between the synopsis and the flags. */
  readonly about?: readonly string[];
}

/** The usage text of a flag table: one line per flag with its help and its default. */
export function formatUsage(table: FlagTable, text: UsageText, envPrefix?: string): string {
  const rows = Object.entries(table).map(([name, flag]) => [left(name, flag), right(flag)]);
  rows.push(['-h, --help', 'print this text']);
  const width = Math.max(...rows.map(([l]) => l.length)) + 2;
  const lines = [
    text.synopsis,
    ...(text.about ?? []),
    'flags:',
    ...rows.map(([l, r]) => `  ${l.padEnd(width)}${r}`.trimEnd()),
  ];
  const example = Object.keys(table).find((name) => table[name].kind !== 'switch');
  if (envPrefix !== undefined && example !== undefined) {
    lines.push(
      `each flag can also be set as an environment variable ${envPrefix}<FLAG> ` +
        `(e.g. ${envName(envPrefix, example)}); lists comma-separated`,
    );
  }
  return lines.join('\n');
}

function left(name: string, flag: Flag): string {
  switch (flag.kind) {
    case 'switch':
      // `--no-NAME` is accepted for every switch; it is worth showing where NAME is on.
      return flag.default ? `--${name}/--no-${name}` : `--${name}`;
    case 'value':
      return `--${name} ${flag.arg}`;
    case 'list':
      return `--${name} ${flag.arg} ...`;
  }
}

function right(flag: Flag): string {
  const fallback = defaultText(flag);
  return fallback === undefined ? flag.help : `${flag.help} (default ${fallback})`;
}

/** A flag's default as the usage text and the reference show it; undefined when unset. */
export function defaultText(flag: Flag): string | undefined {
  switch (flag.kind) {
    case 'switch':
      return flag.default ? 'on' : undefined;
    case 'value':
      return flag.default === undefined || flag.default === null
        ? undefined
        : describe(flag.default);
    case 'list':
      return undefined;
  }
}

function describe(value: unknown): string {
  if (value instanceof URL) return value.href;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  return JSON.stringify(value);
}
