import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..', '..');

interface LintMessage {
  ruleId: string | null;
  message: string;
  line: number;
}

interface LintCase {
  path: string;
  code: string;
}

/**
 * Lints each source as if it were the file at its path with the project's own ESLint config
 * (ESLint's `lintText`, as `eslint --stdin --stdin-filename` does), all in one child process:
 * the config is an ES module, which jest's sandbox cannot load, and one process builds the
 * type-aware program once instead of once per source.
 */
const LINT_SCRIPT = `
const { ESLint } = require('eslint');
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', async () => {
  const eslint = new ESLint();
  const messages = [];
  for (const { path, code } of JSON.parse(input)) {
    const [result] = await eslint.lintText(code, { filePath: path });
    messages.push(result.messages);
  }
  process.stdout.write(JSON.stringify(messages));
});
`;

/** The messages of the boundaries rule for each case, in order. */
async function boundaryErrors(cases: LintCase[]): Promise<LintMessage[][]> {
  const child = promisify(execFile)(process.execPath, ['-e', LINT_SCRIPT], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  child.child.stdin?.end(JSON.stringify(cases));
  const results = JSON.parse((await child).stdout) as LintMessage[][];
  return results.map((messages) => messages.filter((m) => m.ruleId === 'boundaries/dependencies'));
}

const CASES = {
  higher: {
    path: 'libs/frontend/src/thresholds/thresholds.service.ts',
    code:
      "import { WorkerRegistry } from '../worker-monitor/worker-registry.service';\n" +
      'export const registry = WorkerRegistry;\n',
  },
  sameFloorAndRoot: {
    path: 'libs/frontend/src/status/status.service.ts',
    code:
      "import { HealthIndicators } from '../health/health.indicators';\n" +
      "import { FrontendModule } from '../frontend.module';\n" +
      'export const both = [HealthIndicators, FrontendModule];\n',
  },
  lowerAndOwn: {
    path: 'libs/frontend/src/completions/proxy.service.ts',
    code:
      "import { ServiceOverloadedError } from '../admission/errors/service-overloaded.error';\n" +
      "import { WorkerRegistry } from '../worker-monitor/worker-registry.service';\n" +
      "import { RouterService } from './routing/router.service';\n" +
      'export const lower = [ServiceOverloadedError, WorkerRegistry, RouterService];\n',
  },
};

describe('the floors of libs/frontend (npm run lint)', () => {
  let linted: Record<keyof typeof CASES, LintMessage[]>;
  const sut = (name: keyof typeof CASES): LintMessage[] => linted[name];

  // Generous: a type-aware lint takes about 10 s, several times that on a busy 2-core machine.
  beforeAll(async () => {
    const names = Object.keys(CASES) as Array<keyof typeof CASES>;
    const errors = await boundaryErrors(names.map((n) => CASES[n]));
    linted = Object.fromEntries(names.map((n, i) => [n, errors[i]])) as typeof linted;
  }, 180_000);

  it('fails a folder that imports a folder on a higher floor', () => {
    const errors = sut('higher');
    expect(errors).toEqual([
      expect.objectContaining({
        line: 1,
        message: expect.stringMatching(/^thresholds\/ may import only folders on lower floors/),
      }),
    ]);
  });

  it('fails a folder that imports a folder on its own floor, or the root that assembles them', () => {
    const errors = sut('sameFloorAndRoot');
    expect(errors.map((e) => e.line)).toEqual([1, 2]);
  });

  it('passes imports of lower floors and of the folder itself', () => {
    const errors = sut('lowerAndOwn');
    expect(errors).toEqual([]);
  });
});
