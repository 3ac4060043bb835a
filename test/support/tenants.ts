import { MODEL } from './bus';
import { Answer, post } from './http';
import { FrontendProcess } from './processes';

/**
 * Makes tenant `id` with `body` through the admin API (docs/api.md#tenants), as the holder of
 * `adminToken`, and gives it a key; resolves with the key, which the API shows only once.
 */
export async function tenantWithKey(
  fe: FrontendProcess,
  adminToken: string,
  id: string,
  body: object,
): Promise<string> {
  const authorization = `Bearer ${adminToken}`;
  const res = await fetch(`${fe.url}/tenants/${id}`, {
    method: 'PUT',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  const made = await fetch(`${fe.url}/tenants/${id}/keys`, {
    method: 'POST',
    headers: { authorization },
  });
  expect(made.status).toBe(201);
  return ((await made.json()) as { key: string }).key;
}

/** A chat completion sent with a tenant's key (its prompt and max_tokens are what tokens are charged for). */
export const chatWith = (
  fe: FrontendProcess,
  key: string,
  maxTokens = 2,
  content = 'Hi',
): Promise<Answer> =>
  post(
    `${fe.url}/v1/chat/completions`,
    { model: MODEL, messages: [{ role: 'user', content }], max_tokens: maxTokens },
    { authorization: `Bearer ${key}` },
  );
