import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFrontendFlags } from './parse-frontend-flags';

const tokenFile = (text: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), 'sluice-tokens-')), 'tokens');
  writeFileSync(path, text);
  return path;
};

describe('admin tokens', () => {
  const sut = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseFrontendFlags(argv, env);

  it('reads NAME:TOKEN lines from --admin-token-file, with comments, beside --admin-token', () => {
    const path = tokenFile('# admins\nalice:a1b2c3d4e5f6\n\n  bob:z9y8x7w6v5 # on call\n');
    expect(
      sut(['--admin-token', 'ops:q1w2e3r4t5', '--admin-token-file', path]).adminTokens,
    ).toEqual([
      { name: 'ops', token: 'q1w2e3r4t5' },
      { name: 'alice', token: 'a1b2c3d4e5f6' },
      { name: 'bob', token: 'z9y8x7w6v5' },
    ]);
  });

  it('reads the file named by SLUICE_ADMIN_TOKEN_FILE', () => {
    const path = tokenFile('alice:a1b2c3d4e5f6\n');
    expect(sut([], { SLUICE_ADMIN_TOKEN_FILE: path }).adminTokens).toEqual([
      { name: 'alice', token: 'a1b2c3d4e5f6' },
    ]);
  });

  it('names the flag and the path, never a token, when the file is missing or malformed', () => {
    expect(() => sut(['--admin-token-file', '/nonexistent/tokens'])).toThrow(
      /nonexistent\/tokens' for --admin-token-file: cannot read the file \(ENOENT\)/,
    );
    const bad = tokenFile('alice:short\n');
    expect(() => sut(['--admin-token-file', bad])).toThrow(
      /'alice:<hidden>' for --admin-token-file/,
    );
    expect(() => sut(['--admin-token-file', bad])).not.toThrow(/short/);
  });

  it('refuses a name given twice across the flag and the file', () => {
    const path = tokenFile('ops:another-token-2\n');
    expect(() => sut(['--admin-token', 'ops:q1w2e3r4t5', '--admin-token-file', path])).toThrow(
      /admin name 'ops' given twice/,
    );
  });

  it.each([
    'admin:CHANGE-ME-long-random-token', // deploy/k8s/secret.yaml
    'admin:sluice-demo-admin-token', // the former compose default
    'admin:changeme-please-1',
  ])('refuses the example token %s at start', (item) => {
    expect(() => sut(['--admin-token', item])).toThrow(/example token.*not a secret/);
    expect(() => sut([], { SLUICE_ADMIN_TOKEN: item })).toThrow(/SLUICE_ADMIN_TOKEN/);
  });
});
