import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The docs are reference, not a diary (CONTRIBUTING.md): measured runs live in
 * docs/benchmarks.md only, every alert has its runbook entry, and every link resolves.
 */
const ROOT = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
// js-yaml ships no type declarations; it is in node_modules through eslint and @nestjs/swagger.
const yaml = createRequire(__filename)('js-yaml') as { load(text: string): unknown };

const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'docs', 'decisions')).map((f) => `docs/decisions/${f}`),
];
/** Written by the benchmark, with its method, machine and spread. */
const BENCHMARK_REPORT = 'docs/benchmarks.md';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
const anchorOf = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

const anchorsIn = (text: string): Set<string> =>
  new Set([...text.matchAll(/^#+ (.*)$/gm)].map((m) => anchorOf(m[1])));

describe('docs', () => {
  it('keep dated runs to docs/benchmarks.md', () => {
    const dated = /run of record|20\d\d-[01]\d-[0-3]\d [0-2]\d:[0-5]\d/;
    const offending = PAGES.filter((p) => p !== BENCHMARK_REPORT && dated.test(read(p)));
    expect(offending).toEqual([]);
  });

  it('keep the README to one screenful of reference, 250 lines at most', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250);
  });

  it('give every alert a runbook entry in docs/operations.md', () => {
    const rules = yaml.load(read('deploy/prometheus/alerts.yml')) as {
      groups: { rules: { alert?: string }[] }[];
    };
    const alerts = rules.groups.flatMap((g) => g.rules.flatMap((r) => r.alert ?? []));
    const headings = anchorsIn(read('docs/operations.md'));
    expect(alerts.filter((a) => !headings.has(anchorOf(a)))).toEqual([]);
  });

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = read(page);
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [file, anchor] = target.split('#');
        const path = file === '' ? page : join(dirname(page), file);
        if (!existsSync(join(ROOT, path))) broken.push(`${page}: ${target}`);
        else if (anchor && path.endsWith('.md') && !anchorsIn(read(path)).has(anchor)) {
          broken.push(`${page}: ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
