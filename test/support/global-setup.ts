import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATA_TEMPLATE_ENV, TEMP_ROOT_ENV } from '../../libs/testkit/src/apps';
import { spawnApp } from '../../libs/testkit/src/process';

/**
 * Once per run of e2e tests, before the first spec (jest's `globalSetup` of the e2e project):
 * a directory for the run's temporary files (`global-teardown.ts` removes it), and in it an
 * embedded database created and migrated by the project's migrate app. Apps started without a
 * store of their own get a copy of it (testkit's `storeDataDir`) instead of creating one each:
 * about 10 s of CPU per app. The variables reach the spec processes, which jest starts later.
 */
export default async function globalSetup(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'sluice-test-'));
  process.env[TEMP_ROOT_ENV] = root;
  const template = join(root, 'template');
  const migrate = spawnApp('migrate', ['run', '--data-dir', template]);
  const code = await migrate.exited;
  if (code !== 0) {
    throw new Error(
      `the template database (migrate run --data-dir) exited ${code}:\n${migrate.output}`,
    );
  }
  process.env[DATA_TEMPLATE_ENV] = template;
}
