import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..', '..');
const ESLINT = join(ROOT, 'node_modules', '.bin', 'eslint');

interface LintMessage {
  ruleId: string | null;
  message: string;
  line: number;
}

/**
 * Lints `code` as if it were the file at `path` with the project's own ESLint config (in a child
 * process: the config is an ES module, which jest's sandbox cannot load), returning the
 * messages of the boundaries rule.
 */
async function boundaryErrors(path: string, code: string): Promise<LintMessage[]> {
  const child = promisify(execFile)(
    ESLINT,
    ['--format', 'json', '--stdin', '--stdin-filename', path],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  child.child.stdin?.end(code);
  let stdout: string;
  try {
    stdout = (await child).stdout;
  } catch (err) {
    // ESLint exits 1 when it reports errors; the report is still on stdout.
    stdout = (err as { stdout: string }).stdout;
  }
  const [result] = JSON.parse(stdout) as Array<{ messages: LintMessage[] }>;
  return result.messages.filter((m) => m.ruleId === 'boundaries/dependencies');
}

describe('the floors of libs/frontend (npm run lint)', () => {
  const sut = boundaryErrors;

  it('fails a folder that imports a folder on a higher floor', async () => {
    const errors = await sut(
      'libs/frontend/src/thresholds/thresholds.service.ts',
      "import { WorkerRegistry } from '../worker-monitor/worker-registry.service';\n" +
        'export const registry = WorkerRegistry;\n',
    );
    expect(errors).toEqual([
      expect.objectContaining({
        line: 1,
        message: expect.stringMatching(/^thresholds\/ may import only folders on lower floors/),
      }),
    ]);
  });

  it('fails a folder that imports a folder on its own floor, or the root that assembles them', async () => {
    const errors = await sut(
      'libs/frontend/src/status/status.service.ts',
      "import { HealthIndicators } from '../health/health.indicators';\n" +
        "import { FrontendModule } from '../frontend.module';\n" +
        'export const both = [HealthIndicators, FrontendModule];\n',
    );
    expect(errors.map((e) => e.line)).toEqual([1, 2]);
  });

  it('passes imports of lower floors and of the folder itself', async () => {
    const errors = await sut(
      'libs/frontend/src/completions/proxy.service.ts',
      "import { ServiceOverloadedError } from '../admission/errors/service-overloaded.error';\n" +
        "import { WorkerRegistry } from '../worker-monitor/worker-registry.service';\n" +
        "import { RouterService } from './routing/router.service';\n" +
        'export const lower = [ServiceOverloadedError, WorkerRegistry, RouterService];\n',
    );
    expect(errors).toEqual([]);
  });
});
