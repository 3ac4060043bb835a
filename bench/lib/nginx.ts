import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OVERLOAD_BODY } from './http';
import { acceptsConnections, commandExists, Proc, ProcessGroup } from '@sluice/testkit';
import { freePort, waitFor } from './util';

export const NGINX_INSTALL_HINT =
  "nginx is needed for the reference servers; install Debian's package: " +
  'sudo apt-get update && sudo apt-get install -y nginx-light';

export function nginxBinary(): string | null {
  return commandExists('nginx');
}

/**
 * Starts nginx in the foreground (one worker process, no access log) with its own prefix, either
 * answering the overload 503 itself (`return 503`) or as a keep-alive reverse proxy to `upstream`.
 */
export async function startNginx(
  group: ProcessGroup,
  tmpDir: string,
  mode: { kind: 'return503' } | { kind: 'proxy'; upstreamPort: number },
  cpu: string,
): Promise<{ proc: Proc; url: string }> {
  const bin = nginxBinary();
  if (!bin) throw new Error(NGINX_INSTALL_HINT);
  const port = await freePort();
  const prefix = mkdtempSync(join(tmpDir, 'nginx-'));
  for (const d of ['logs', 'tmp']) mkdirSync(join(prefix, d));
  chmodSync(prefix, 0o755);
  const location =
    mode.kind === 'return503'
      ? `default_type application/json;
         add_header Retry-After 1 always;
         return 503 '${OVERLOAD_BODY}';`
      : `proxy_pass http://backend;
         proxy_http_version 1.1;
         proxy_set_header Connection "";
         proxy_buffering off;`;
  const upstream =
    mode.kind === 'proxy'
      ? `upstream backend { server 127.0.0.1:${mode.upstreamPort}; keepalive 64; }`
      : '';
  const conf = `
worker_processes 1;
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${prefix}/tmp/body;
  proxy_temp_path ${prefix}/tmp/proxy;
  fastcgi_temp_path ${prefix}/tmp/fastcgi;
  uwsgi_temp_path ${prefix}/tmp/uwsgi;
  scgi_temp_path ${prefix}/tmp/scgi;
  keepalive_requests 1000000;
  ${upstream}
  server {
    listen 127.0.0.1:${port};
    location / {
      ${location}
    }
  }
}
`;
  const file = join(prefix, 'nginx.conf');
  writeFileSync(file, conf);
  const proc = group.exec(`nginx-${mode.kind}`, bin, ['-p', prefix, '-c', file], { cpu });
  await waitFor(() => acceptsConnections(port), `nginx on port ${port}`);
  return { proc, url: `http://127.0.0.1:${port}` };
}
