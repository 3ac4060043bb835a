/**
 * Tenants of a frontend, set up through its `/tenants` admin API (docs/api.md#tenants): each
 * created with its weight and given one key, and the key checked to reach its tenant.
 */
import { request } from 'undici';
import { chatBody, httpPost, MODEL } from './http';
import { Started } from './sluice';

/** The admin token the frontend is started with (`--admin-token ops:<token>`). */
export const TENANT_ADMIN_TOKEN = 'bench-tenants-admin-token';
export const TENANT_ADMIN_FLAGS = ['--admin-token', `ops:${TENANT_ADMIN_TOKEN}`];

const asOps = { authorization: `Bearer ${TENANT_ADMIN_TOKEN}` };

async function admin(
  url: string,
  method: 'GET' | 'PUT' | 'POST',
  body?: unknown,
): Promise<unknown> {
  const res = await request(url, {
    method,
    headers: { 'content-type': 'application/json', ...asOps },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as unknown;
}

/** Creates the tenant with its weight and one key; returns the key once a request with it counts. */
export async function createTenant(fe: Started, id: string, weight: number): Promise<string> {
  await admin(`${fe.url}/tenants/${id}`, 'PUT', { weight, reason: 'bench' });
  const { key } = (await admin(`${fe.url}/tenants/${id}/keys?reason=bench`, 'POST', {})) as {
    key: string;
  };
  const answer = await httpPost(`${fe.url}/v1/chat/completions`, chatBody(MODEL, 4), {
    authorization: `Bearer ${key}`,
  });
  if (answer.status !== 200) throw new Error(`tenant ${id}: ${answer.status} ${answer.text}`);
  const usage = (await admin(`${fe.url}/tenants/${id}/usage`, 'GET')) as {
    requests: { admitted: number };
  };
  if (usage.requests.admitted < 1) throw new Error(`tenant ${id}: its key's request not counted`);
  return key;
}
