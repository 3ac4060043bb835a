import { rmSync } from 'node:fs';
import { TEMP_ROOT_ENV } from '../../libs/testkit/src/apps';
import { dropDatabase, PG_TEMPLATE_ENV } from './database';

/**
 * After the run (jest's `globalTeardown` of the e2e project): its temporary files go, and its
 * PostgreSQL template.
 */
export default async function globalTeardown(): Promise<void> {
  const root = process.env[TEMP_ROOT_ENV];
  if (root) rmSync(root, { recursive: true, force: true });
  const template = process.env[PG_TEMPLATE_ENV];
  // PostgreSQL away by now fails the specs that use it; the teardown only says so.
  if (template) {
    await dropDatabase(template).catch((err: unknown) =>
      process.stderr.write(`e2e teardown: cannot drop ${template}: ${String(err)}\n`),
    );
  }
}
