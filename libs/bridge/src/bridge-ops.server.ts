import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { EngineBridge } from './engine-bridge';

export interface BridgeOpsServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The standalone bridge's own `GET /metrics` (Prometheus text) and `GET /health` (200 with
 * every worker's status while the bridge runs). Inside the frontend its endpoints serve these.
 */
export async function startBridgeOpsServer(opts: {
  host: string;
  port: number;
  registry: Registry;
  bridge: EngineBridge;
}): Promise<BridgeOpsServer> {
  const server = createServer((req, res) => {
    handle(req, res, opts).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`error: ${String(err)}\n`);
    });
  });
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return { url: `http://${host}:${port}`, close: () => close(server) };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  opts: { registry: Registry; bridge: EngineBridge },
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res
      .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' })
      .end('method not allowed\n');
  } else if (path === '/metrics') {
    const body = await opts.registry.metrics();
    res.writeHead(200, { 'content-type': opts.registry.contentType }).end(body);
  } else if (path === '/health') {
    const workers = opts.bridge.status();
    const body = JSON.stringify({
      status: 'ok',
      up: workers.filter((w) => w.up).length,
      down: workers.filter((w) => !w.up).length,
      workers,
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  } else {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  }
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
