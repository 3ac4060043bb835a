/**
 * `--nats-url` may carry credentials (`nats://user:pass@host:4222`, or `nats://token@host`),
 * but nats.js reads them only from its `user`/`pass`/`token` options, never from the URL: a
 * secured server then sees an anonymous client and refuses it. These split them out, and give
 * the URL to print without them.
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

/** The URL with any user-info replaced, for logs and error messages. */
export function redactedUrl(natsUrl: string): string {
  if (!URL.canParse(natsUrl)) return '<invalid url>';
  const url = new URL(natsUrl);
  if (!url.username && !url.password) return natsUrl;
  url.username = '***';
  url.password = '';
  return url.toString();
}
