import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configurationPage } from './configuration.page';
import { metricFamilies, metricsPage } from './metrics.page';

/**
 * docs/configuration.md and docs/metrics.md are written from the code, so they cannot drift
 * from it: this spec fails when a page differs from what the code gives, and
 * `npm run docs:write` (SLUICE_WRITE_DOCS=1) writes them instead.
 */
const ROOT = join(__dirname, '..', '..');
const WRITE = process.env.SLUICE_WRITE_DOCS === '1';

function check(page: string, text: string): void {
  const path = join(ROOT, page);
  if (WRITE) {
    writeFileSync(path, text);
    return;
  }
  const onDisk = readFileSync(path, 'utf8');
  if (onDisk === text) return;
  const lines = onDisk.split('\n');
  const at = text.split('\n').findIndex((line, i) => line !== lines[i]);
  throw new Error(
    `${page} is stale: run \`npm run docs:write\` and commit the result.\n` +
      `First difference at line ${at + 1}:\n  on disk:   ${lines[at]}\n  from code: ${text.split('\n')[at]}`,
  );
}

describe('generated reference pages', () => {
  it('docs/configuration.md lists every flag of every app as the flag tables say', () => {
    check('docs/configuration.md', configurationPage());
  });

  it('docs/metrics.md lists every metric as the apps register them', async () => {
    check('docs/metrics.md', metricsPage(await metricFamilies()));
  });
});
