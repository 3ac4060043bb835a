import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { CPU } from './context';
import { ProcessGroup } from '@sluice/testkit';
import { monotonicUs, ProfileSummary, summarizeProfile } from './profile';
import { FrontendOptions, startFrontend, Started } from './sluice';

/**
 * A frontend started under `node --cpu-prof`; `finish()` makes it exit normally (so the profile
 * is written) and returns the hot spots.
 */
export async function startProfiledFrontend(
  group: ProcessGroup,
  tmpDir: string,
  options: Omit<FrontendOptions, 'nodeArgs' | 'cpu'>,
): Promise<{ fe: Started; finish: (load: () => Promise<unknown>) => Promise<ProfileSummary> }> {
  const dir = mkdtempSync(join(tmpDir, 'cpuprof-'));
  const fe = await startFrontend(group, {
    ...options,
    name: 'frontend-profiled',
    cpu: CPU.server,
    nodeArgs: [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      '-r',
      join(__dirname, '..', 'tools', 'profile-exit.js'),
    ],
  });
  return {
    fe,
    /** Runs `load`, then stops the frontend and summarises the samples taken during `load`. */
    finish: async (load) => {
      const fromUs = monotonicUs();
      await load();
      const toUs = monotonicUs();
      fe.proc.child.kill('SIGUSR2');
      await fe.proc.exited;
      return summarizeProfile(dir, { fromUs, toUs });
    },
  };
}
