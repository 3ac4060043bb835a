/**
 * `--nats-url` may carry credentials (`nats://user:pass@host:4222`, or `nats://token@host`),
 * but nats.js reads them only from its `user`/`pass`/`token` options, never from the URL: a
 * secured server then sees an anonymous client and refuses it. `natsServerOptions` splits them
 * (`redactCredentials` gives the URL to print).
 */
export interface NatsServerOptions {
  servers: string;
  user?: string;
  pass?: string;
  token?: string;
}

export function natsServerOptions(natsUrl: string): NatsServerOptions {
  const url = new URL(natsUrl);
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  const servers = url.toString();
  if (user && pass) return { servers, user, pass };
  if (user) return { servers, token: user };
  return { servers };
}
