import { readConfigLines } from './config-file';
import { AdminToken } from './frontend-config';
import { FrontendConfigError } from './frontend-config.error';

/**
 * Tokens shipped as examples (the Kubernetes Secret's placeholder, the old compose default): a
 * deployment that forgot to replace one would accept a token anyone can read in this repository.
 */
const PLACEHOLDER = /change-?me|sluice-demo|placeholder|example-token/i;

/** A repeatable flag's items and the flag or variable they came from (for error messages). */
export interface ListItems {
  readonly source: string;
  readonly items: readonly string[];
}

/**
 * `NAME:TOKEN` items from `--admin-token` (repeatable; env: comma-separated) and from
 * `--admin-token-file` (one a line, `#` comments), so tokens need not appear on a command line
 * that `ps` shows. Token values never reach an error message.
 */
export function parseAdminTokens(
  listed: ListItems,
  file: { path: string; source: string } | undefined,
): AdminToken[] {
  const lists = [listed];
  if (file) lists.push({ source: file.source, items: readTokenFile(file.path, file.source) });
  const tokens: AdminToken[] = [];
  for (const { source, items } of lists) {
    for (const item of items) tokens.push(parseItem(item, source, tokens));
  }
  return tokens;
}

function readTokenFile(path: string, source: string): string[] {
  return readConfigLines(path, source).map((l) => l.text);
}

function parseItem(item: string, source: string, seen: readonly AdminToken[]): AdminToken {
  const i = item.indexOf(':');
  const name = i > 0 ? item.slice(0, i) : '';
  const token = i > 0 ? item.slice(i + 1) : '';
  const shown = name ? `${name}:<hidden>` : '<hidden>';
  if (!/^[A-Za-z0-9_.@-]{1,64}$/.test(name) || token.length < 8 || /\s/.test(token)) {
    throw new FrontendConfigError(
      source,
      shown,
      'expected NAME:TOKEN (name: 1-64 of A-Z a-z 0-9 _ . @ -; token: 8+ characters, no spaces)',
    );
  }
  if (PLACEHOLDER.test(token)) {
    throw new FrontendConfigError(
      source,
      shown,
      'this is an example token from the repository, not a secret: set a long random one',
    );
  }
  if (seen.some((t) => t.name === name)) {
    throw new FrontendConfigError(source, shown, `admin name '${name}' given twice`);
  }
  return { name, token };
}
