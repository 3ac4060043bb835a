import { createHash } from 'node:crypto';
import { queryRows } from './support/database';
import { useEmbedded, useSystem } from './support/fixtures';
import { Answer, chat, post, request } from './support/http';
import { FrontendProcess, waitFor } from './support/processes';

const TOKEN = 'tenant-admin-token-1';
const asOps = { authorization: `Bearer ${TOKEN}` };

const call = (
  url: string,
  method = 'GET',
  body?: unknown,
  headers: Record<string, string> = asOps,
): Promise<Answer> => request(url, method, body, headers);

const withKey = (key: string) => ({ authorization: `Bearer ${key}` });
const chatAs = (fe: FrontendProcess, headers: Record<string, string>) =>
  post(
    `${fe.url}/v1/chat/completions`,
    { model: 'Qwen/Qwen3-0.6B', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 },
    headers,
  );

const INVALID_KEY = {
  error: {
    message: 'Incorrect API key provided: no tenant holds this key',
    type: 'invalid_request_error',
    code: 'invalid_api_key',
  },
};

/**
 * docs/api.md#tenants, items 1 of issue 43: tenants and their keys managed over `/tenants` on one
 * replica of two (real PostgreSQL, NATS, a real simulated worker), stored as digests and audited,
 * and the key → tenant lookup with `--require-tenant` on the other replica.
 */
describe('tenants and their keys (PostgreSQL, two replicas)', () => {
  const flags = ['--admin-token', `ops:${TOKEN}`, '--require-tenant'];
  const A = useSystem({ database: 'tenants', workers: [[]], reporting: true, frontend: flags });
  const B = useSystem({
    namespace: A.namespace,
    frontend: (): string[] => ['--database-url', A.db.url(), ...flags],
  });
  const tenants = (fe: FrontendProcess, path = '') => `${fe.url}/tenants${path}`;

  it('needs the admin token on every route, reads included', async () => {
    expect((await call(tenants(A.fe), 'GET', undefined, {})).status).toBe(401);
    expect((await call(tenants(A.fe), 'GET', undefined, withKey('wrong'))).status).toBe(403);
    expect((await call(tenants(A.fe, '/acme'), 'PUT', {}, {})).status).toBe(401);
    expect((await call(tenants(A.fe), 'GET')).json).toEqual({ tenants: [], next: null });
  });

  it('refuses bad input with a 400 naming the field, and stores nothing', async () => {
    const bad = await call(tenants(A.fe, '/acme'), 'PUT', {
      weight: 0,
      requests_per_minute: 1.5,
      priority: 'gold',
      colour: 'red',
    });
    expect(bad.status).toBe(400);
    const message = (bad.json as { message: string }).message;
    for (const field of ['weight', 'requests_per_minute', 'priority', 'colour']) {
      expect(message).toContain(field);
    }
    expect((await call(tenants(A.fe, '/bad%20id'), 'PUT', {})).status).toBe(400);
    expect((await call(tenants(A.fe, '/acme'), 'PUT', '[1]')).status).toBe(400);
    expect((await call(tenants(A.fe, '/acme'))).status).toBe(404);
    expect((await call(tenants(A.fe, '/acme/keys'), 'POST')).status).toBe(404);
    const rows = await queryRows<{ n: string }>(
      A.db.url(),
      'SELECT count(*) AS n FROM tenant_audit',
    );
    expect(rows[0].n).toBe('0');
  });

  it('creates, replaces, lists and audits a tenant', async () => {
    const created = await call(tenants(A.fe, '/acme?x=1'), 'PUT', {
      weight: 2,
      requests_per_minute: 600,
      reason: 'onboarding',
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      id: 'acme',
      weight: 2,
      requests_per_minute: 600,
      tokens_per_minute: null,
      max_concurrency: null,
      priority: null,
      keys: [],
    });
    const replaced = await call(tenants(A.fe, '/acme'), 'PUT', { max_concurrency: 4 });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toMatchObject({
      weight: 1,
      requests_per_minute: null,
      max_concurrency: 4,
    });
    expect((await call(tenants(A.fe, '/beta'), 'PUT', {})).status).toBe(201);
    const first = (await call(tenants(A.fe, '?limit=1'))).json as {
      tenants: Array<{ id: string }>;
      next: string;
    };
    expect(first.tenants.map((t) => t.id)).toEqual(['acme']);
    const second = (await call(tenants(A.fe, `?limit=1&after=${first.next}`))).json as {
      tenants: Array<{ id: string }>;
      next: string | null;
    };
    expect(second).toMatchObject({ tenants: [{ id: 'beta' }], next: null });
    const audit = (await call(tenants(A.fe, '/acme/audit'))).json as {
      entries: Array<Record<string, unknown>>;
    };
    expect(audit.entries).toEqual([
      expect.objectContaining({
        actor: 'ops',
        action: 'put',
        before: expect.objectContaining({ weight: 2, requests_per_minute: 600 }),
        after: expect.objectContaining({ weight: 1, max_concurrency: 4 }),
        reason: null,
      }),
      expect.objectContaining({ actor: 'ops', action: 'put', before: null, reason: 'onboarding' }),
    ]);
  });

  it('gives a key once, stores only its digest, and the other replica admits it', async () => {
    const made = await call(tenants(A.fe, '/acme/keys?reason=ci'), 'POST');
    expect(made.status).toBe(201);
    const { key, key_id } = made.json as { key: string; key_id: string };
    expect(key).toMatch(/^sk-sluice-/);
    const stored = await queryRows<{ key_hash: string; tenant_id: string }>(
      A.db.url(),
      'SELECT key_hash, tenant_id FROM tenant_keys',
    );
    expect(stored).toEqual([
      { key_hash: createHash('sha256').update(key).digest('hex'), tenant_id: 'acme' },
    ]);
    const shown = (await call(tenants(A.fe, '/acme'))).json as { keys: unknown[] };
    expect(shown.keys).toEqual([{ key_id, created_at: expect.any(String) }]);
    expect(JSON.stringify(shown)).not.toContain(key);

    await waitFor(async () => (await chatAs(B.fe, withKey(key))).status === 200, 'B admits key');
    const unknown = await chatAs(B.fe, withKey('sk-sluice-not-a-key'));
    expect(unknown.status).toBe(401);
    expect(unknown.json).toEqual(INVALID_KEY);
    expect((await chatAs(B.fe, {})).status).toBe(401);

    expect((await call(tenants(A.fe, `/acme/keys/${key_id}`), 'DELETE')).status).toBe(204);
    expect((await call(tenants(A.fe, `/acme/keys/${key_id}`), 'DELETE')).status).toBe(404);
    await waitFor(async () => (await chatAs(B.fe, withKey(key))).status === 401, 'B drops key');
    const actions = (
      (await call(tenants(B.fe, '/acme/audit'))).json as {
        entries: Array<{ action: string; reason: string | null; after: { key_ids: string[] } }>;
      }
    ).entries.slice(0, 2);
    expect(actions).toEqual([
      expect.objectContaining({
        action: 'key_deleted',
        after: expect.objectContaining({ key_ids: [] }),
      }),
      expect.objectContaining({
        action: 'key_created',
        reason: 'ci',
        after: expect.objectContaining({ key_ids: [key_id] }),
      }),
    ]);
  });

  it('deletes a tenant with its keys, audited', async () => {
    const { key } = (await call(tenants(A.fe, '/beta/keys'), 'POST')).json as { key: string };
    await waitFor(async () => (await chatAs(B.fe, withKey(key))).status === 200, 'B admits key');
    expect((await call(tenants(A.fe, '/beta?reason=offboarded'), 'DELETE')).status).toBe(204);
    expect((await call(tenants(A.fe, '/beta'))).status).toBe(404);
    await waitFor(async () => (await chatAs(B.fe, withKey(key))).status === 401, 'B drops tenant');
    const [last] = (
      (await call(tenants(A.fe, '/beta/audit'))).json as {
        entries: Array<Record<string, unknown>>;
      }
    ).entries;
    expect(last).toMatchObject({ action: 'delete', after: null, reason: 'offboarded' });
  });
});

describe('tenants in the embedded database (npm start)', () => {
  const app = useEmbedded({ flags: ['--require-tenant'] });

  it('stores tenants and admits their keys only', async () => {
    expect((await call(`${app.url}/tenants/solo`, 'PUT', { weight: 1 }, {})).status).toBe(201);
    const made = await call(`${app.url}/tenants/solo/keys`, 'POST', undefined, {});
    expect(made.status).toBe(201);
    const { key } = made.json as { key: string };
    await waitFor(async () => (await chat(app.url)).status === 401, 'serving');
    await waitFor(
      async () =>
        (
          await post(
            `${app.url}/v1/chat/completions`,
            {
              model: 'Qwen/Qwen3-0.6B',
              messages: [{ role: 'user', content: 'Hi' }],
              max_tokens: 2,
            },
            withKey(key),
          )
        ).status === 200,
      'the key admitted',
    );
  });
});
