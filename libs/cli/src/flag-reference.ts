import { envName, Flag, FlagTable } from './flag-table';
import { defaultText } from './usage.formatter';

/**
 * A flag table as the Markdown table of docs/configuration.md: one row per flag with its
 * variable (when the app reads its flags from the environment), its default and its help.
 */
export function formatFlagReference(table: FlagTable, envPrefix?: string): string {
  const withEnv = envPrefix !== undefined;
  const head = withEnv
    ? ['flag', 'variable', 'default', 'meaning']
    : ['flag', 'default', 'meaning'];
  const rows = Object.entries(table).map(([name, flag]) => [
    code(flagText(name, flag)),
    ...(withEnv ? [variableText(name, flag, envPrefix)] : []),
    code(defaultText(flag)) || (flag.kind === 'switch' ? 'off' : 'unset'),
    meaning(flag),
  ]);
  return [head, head.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

function flagText(name: string, flag: Flag): string {
  switch (flag.kind) {
    case 'switch':
      return `--${name}, --no-${name}`;
    case 'value':
      return `--${name} ${flag.arg}`;
    case 'list':
      return `--${name} ${flag.arg}`;
  }
}

/** Switches are not read from the environment (flag-table.ts). */
function variableText(name: string, flag: Flag, prefix: string): string {
  return flag.kind === 'switch' ? '—' : code(envName(prefix, name));
}

function meaning(flag: Flag): string {
  const help = cell(flag.help);
  if (flag.kind !== 'list') return help;
  return `${help}. Repeatable; its variable takes a comma-separated list`;
}

/** A code span in a table cell: GitHub's tables split on every unescaped `|`, even in code. */
function code(text: string | undefined): string {
  return text === undefined ? '' : `\`${cell(text)}\``;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}
