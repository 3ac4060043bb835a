import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@sluice/testkit';
import { TargetSpecError } from './target';
import { TargetsFileSource } from './targets-file.source';

describe('TargetsFileSource', () => {
  let dir: string;
  const warnings: string[] = [];
  const logger = {
    log: () => undefined,
    warn: (m: string) => warnings.push(m),
    error: () => undefined,
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-targets-'));
    warnings.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses an invalid file at start, naming the line', async () => {
    const file = join(dir, 'targets');
    writeFileSync(file, 'http://a:1\nnope\n');
    const sut = new TargetsFileSource(file, logger, 50);
    await expect(sut.start(() => undefined)).rejects.toThrow(/line 2/);
    await expect(
      new TargetsFileSource(join(dir, 'missing'), logger).start(() => undefined),
    ).rejects.toThrow(TargetSpecError);
  });

  it('re-reads the file when it changes, also when replaced by rename, and keeps the set when invalid', async () => {
    const file = join(dir, 'targets');
    writeFileSync(file, 'a=http://10.0.0.1:8000\n');
    const sut = new TargetsFileSource(file, logger, 50);
    let changes = 0;
    await sut.start(() => changes++);
    const ids = () => sut.current().map((t) => t.workerId);
    expect(ids()).toEqual(['a']);

    writeFileSync(file, 'a=http://10.0.0.1:8000\nb=http://10.0.0.2:8000\n');
    await waitFor(() => ids().length === 2, 'reload after write');

    writeFileSync(file, 'this is not a target\n');
    await waitFor(() => warnings.some((w) => /invalid/.test(w)), 'warning for an invalid file');
    expect(ids()).toEqual(['a', 'b']);

    const next = join(dir, 'targets.new');
    writeFileSync(next, 'c=http://10.0.0.3:8000\n');
    renameSync(next, file);
    await waitFor(() => ids().join() === 'c', 'reload after rename');
    expect(changes).toBe(2);
    sut.stop();
  });
});
