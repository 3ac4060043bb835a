import { rmSync } from 'node:fs';
import { TEMP_ROOT_ENV } from '../../libs/testkit/src/apps';

/** After the run (jest's `globalTeardown` of the e2e project): its temporary files go. */
export default function globalTeardown(): void {
  const root = process.env[TEMP_ROOT_ENV];
  if (root) rmSync(root, { recursive: true, force: true });
}
