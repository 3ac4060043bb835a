import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorOf } from './flag-error.fixture';
import { envName, parseFrontendFlags } from './parse-frontend-flags';

const fileWith = (text: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), 'sluice-priority-')), 'keys');
  writeFileSync(path, text);
  return path;
};

describe('priority flags (docs/security.md#priority-classes-who-may-set-x-sluice-priority)', () => {
  const sut = parseFrontendFlags;

  it('reads x-sluice-priority with sheddable x 0.8 and critical x 1.2 by default', () => {
    expect(sut([])).toMatchObject({
      priorityHeader: 'x-sluice-priority',
      priorityFactors: { sheddable: 0.8, critical: 1.2 },
      priorityKeys: null,
    });
  });

  it('takes factors repeated or comma-separated, the last one given winning', () => {
    expect(sut(['--priority-factor', 'sheddable=0.5,critical=2']).priorityFactors).toEqual({
      sheddable: 0.5,
      critical: 2,
    });
    expect(
      sut(['--priority-factor', 'critical=1.5', '--priority-factor', ' sheddable=0 '])
        .priorityFactors,
    ).toEqual({ sheddable: 0, critical: 1.5 });
    expect(
      sut(['--priority-factor=critical=3', '--priority-factor=critical=1']).priorityFactors,
    ).toEqual({ sheddable: 0.8, critical: 1 });
    expect(sut([], { SLUICE_PRIORITY_FACTOR: 'sheddable=1,critical=4' }).priorityFactors).toEqual({
      sheddable: 1,
      critical: 4,
    });
  });

  it.each([
    'sheddable=1.2',
    'critical=0.9',
    'sheddable=-0.1',
    'standard=1',
    'urgent=2',
    'critical',
    'critical=',
    'critical=abc',
    'critical=Infinity',
    'critical=1=2',
    'sheddable=0.5,,critical=2',
  ])('refuses --priority-factor %s, naming the flag and the value', (value) => {
    const err = errorOf(['--priority-factor', value]);
    expect(err.message).toContain('--priority-factor');
    expect(err.message).toContain(`'${value}'`);
  });

  it('names SLUICE_PRIORITY_FACTOR when the variable is invalid', () => {
    expect(envName('priority-factor')).toBe('SLUICE_PRIORITY_FACTOR');
    const err = errorOf([], { SLUICE_PRIORITY_FACTOR: 'sheddable=0.5,critical=0.5' });
    expect(err.flag).toBe('SLUICE_PRIORITY_FACTOR');
  });

  it('renames the header (compared in lower case) or disables it', () => {
    expect(sut(['--priority-header', 'X-Tier']).priorityHeader).toBe('x-tier');
    expect(sut(['--priority-header', 'none']).priorityHeader).toBeNull();
    expect(sut([], { SLUICE_PRIORITY_HEADER: 'none' }).priorityHeader).toBeNull();
    for (const bad of ['x tier', 'x-tier:', '', 'é']) {
      expect(errorOf(['--priority-header', bad]).flag).toBe('--priority-header');
    }
  });

  describe('--priority-key-file', () => {
    it('reads CLASS:API_KEY lines, with comments and blank lines', () => {
      const path = fileWith(
        '# batch jobs\nsheddable:sk-batch-1\n\ncritical:sk:with:colons # ops\n',
      );
      expect(sut(['--priority-key-file', path]).priorityKeys).toEqual([
        { key: 'sk-batch-1', max: 'sheddable' },
        { key: 'sk:with:colons', max: 'critical' },
      ]);
      expect(sut([], { SLUICE_PRIORITY_KEY_FILE: path }).priorityKeys).toHaveLength(2);
    });

    it.each([
      ['urgent:sk-1', '<hidden>'],
      ['sk-1', '<hidden>'],
      ['critical:', 'critical:<hidden>'],
      ['critical:sk 1', 'critical:<hidden>'],
    ])('refuses the line %s, naming the file and line but never the key', (line, shown) => {
      const path = fileWith(`standard:sk-ok\n${line}\n`);
      const err = errorOf(['--priority-key-file', path]);
      expect(err.flag).toBe('--priority-key-file');
      expect(err.value).toBe(`${path}:2 ${shown}`);
      expect(err.message).not.toContain('sk-1');
    });

    it('refuses a key listed twice, a missing file, and a file without the header', () => {
      const twice = fileWith('critical:sk-1\nsheddable:sk-1\n');
      expect(errorOf(['--priority-key-file', twice]).message).toContain('listed twice');
      expect(errorOf(['--priority-key-file', '/nonexistent/keys']).message).toContain('ENOENT');
      const path = fileWith('critical:sk-1\n');
      const err = errorOf(['--priority-key-file', path, '--priority-header', 'none']);
      expect(err.flag).toBe('--priority-key-file');
      expect(err.message).toContain('--priority-header is none');
    });
  });
});
