/**
 * A lightweight stand-in for a fleet of vLLM engines: one process answering `GET /metrics` on
 * COUNT loopback ports (one port per engine, so a scraper holds one keep-alive connection per
 * engine, as in a real fleet), each with its own realistic vLLM 0.11 body (bench/lib/vllm-metrics,
 * ~45 KB). The bodies are rendered once: what is measured is the scraper, not this process.
 * Like vLLM's API server, every `GET /metrics` answers the whole body whatever its query
 * (`?name[]=…` included); with `--honour-name-filter`, `?name[]=A&name[]=B` answers only the
 * samples named A and B, as prometheus_client's own exporter (vLLM before the 0.8 series) does.
 * `--ignore-name-filter`, the default, is accepted for older callers.
 * Prints one JSON line when every port listens:
 *
 *   {"event":"ready","ports":[…],"bodyBytes":45021,"honourFilter":false}
 *
 *   node .bench/bench/tools/engine-farm.js COUNT MODEL [--honour-name-filter]
 */
import { createServer as createHttpServer } from 'node:http';
import { AddressInfo, createServer, Server } from 'node:net';
import { vllmMetricsText } from '../lib/vllm-metrics';

const [countArg, model, option] = process.argv.slice(2);
const count = Number(countArg);
const honourFilter = option === '--honour-name-filter';
const knownOption = [undefined, '--honour-name-filter', '--ignore-name-filter'].includes(option);
if (!Number.isInteger(count) || count < 1 || count > 10000 || !model || !knownOption) {
  process.stderr.write('usage: engine-farm COUNT MODEL [--honour-name-filter]\n');
  process.exit(2);
}

const bodies = new Map<number, Buffer>();
/** Filtered answers, rendered once per port and query. */
const restricted = new Map<string, Buffer>();
const notFound = Buffer.from('Not Found');
let requests = 0;

function answer(port: number, url: string): Buffer | undefined {
  const [path, query] = url.split('?', 2);
  const body = path === '/metrics' ? bodies.get(port) : undefined;
  const names = new URLSearchParams(query ?? '').getAll('name[]');
  if (!body || !honourFilter || names.length === 0) return body;
  const key = `${port}?${query}`;
  let out = restricted.get(key);
  if (!out) {
    out = Buffer.from(onlySamples(body.toString(), new Set(names)));
    restricted.set(key, out);
  }
  return out;
}

/** prometheus_client's restricted registry: the named samples, with their families' HELP/TYPE. */
function onlySamples(text: string, names: ReadonlySet<string>): string {
  const out: string[] = [];
  let header: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('# HELP ')) header = [line];
    else if (line.startsWith('#')) header.push(line);
    else if (names.has(line.replace(/[{ ].*$/, ''))) {
      out.push(...header, line);
      header = [];
    }
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}

// One HTTP parser for every port: each listener hands its connections to it.
const http = createHttpServer((req, res) => {
  requests++;
  const body = answer(req.socket.localPort ?? 0, req.url ?? '');
  if (!body) return void res.writeHead(404, { 'content-length': notFound.length }).end(notFound);
  res
    .writeHead(200, {
      'content-type': 'text/plain; version=0.0.4; charset=utf-8',
      'content-length': body.length,
    })
    .end(body);
});
// uvicorn's default keep-alive is 5 s; a scraper every 250 ms keeps each connection open.
http.keepAliveTimeout = 5000;

function listen(): Promise<Server> {
  const server = createServer({ noDelay: true }, (socket) => http.emit('connection', socket));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

async function main(): Promise<void> {
  const servers: Server[] = [];
  for (let i = 0; i < count; i++) {
    const server = await listen();
    const port = (server.address() as AddressInfo).port;
    servers.push(server);
    const body = vllmMetricsText({
      model,
      kvUsage: ((i * 37) % 70) / 100,
      numGpuBlocks: 2048 + (i % 7) * 16,
      running: i % 40,
      waiting: i % 3,
      seed: i,
    });
    bodies.set(port, Buffer.from(body));
  }
  const ports = [...bodies.keys()];
  process.stdout.write(
    `${JSON.stringify({ event: 'ready', ports, bodyBytes: bodies.get(ports[0])?.length, honourFilter })}\n`,
  );
  const stop = (): void => {
    process.stderr.write(`engine-farm: ${requests} requests served\n`);
    for (const s of servers) s.close();
    http.closeAllConnections();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`engine-farm failed: ${String(err)}\n`);
  process.exit(1);
});
