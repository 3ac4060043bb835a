import { readFileSync } from 'node:fs';
import { spawnProcess } from './process';
import { sleep } from './wait';

/** Running: it exists and is not a zombie waiting for a parent that does not reap it. */
const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('Proc', () => {
  it('stops what the process started along with it (its process group)', async () => {
    // A shell that starts a long sleep and waits: SIGTERM ends the shell, not the sleep.
    const sut = spawnProcess('sh', ['-c', 'sleep 300 & echo "child $!"; wait'], { name: 'sh' });
    const pid = Number((await sut.waitForOutput(/child (\d+)/))[1]);
    expect(alive(pid)).toBe(true);
    await sut.stop();
    for (let i = 0; i < 40 && alive(pid); i++) await sleep(25);
    expect(alive(pid)).toBe(false);
  });
});
