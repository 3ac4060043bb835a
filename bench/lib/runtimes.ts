import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** A Node binary and the version it reports. */
export interface Runtime {
  readonly path: string;
  readonly version: string;
}

export function ownRuntime(): Runtime {
  return { path: process.execPath, version: process.version };
}

/**
 * The Node to compare the runtime of record with: `--compare-node PATH`, `none` for no
 * comparison, or by default the first other `node` on PATH. npm puts node_modules/.bin (the
 * runtime of record) first, so that is usually the system Node a machine came with.
 */
export function comparisonRuntime(flag: string | null): Runtime | null {
  if (flag === 'none') return null;
  const own = realpathSync(process.execPath);
  const path =
    flag ??
    (process.env.PATH ?? '')
      .split(delimiter)
      .map((dir) => join(dir, 'node'))
      .find((p) => existsSync(p) && realpathSync(p) !== own);
  if (!path) return null;
  const r = spawnSync(path, ['-p', 'process.version'], { encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`--compare-node ${path} does not run: ${r.stderr || r.error}`);
  const version = r.stdout.trim();
  return version === process.version ? null : { path, version };
}
