/**
 * A lightweight stand-in for a fleet of vLLM engines: one process answering `GET /metrics` on
 * COUNT loopback ports (one port per engine, so a scraper holds one keep-alive connection per
 * engine, as in a real fleet), each with its own realistic vLLM `/metrics` body
 * (bench/lib/vllm-metrics, ~45 KB), whole whatever the query asks for. The bodies are rendered
 * once: what is measured is the scraper, not this process. Prints one JSON line when every port
 * listens: `{"ports":[…],"bodyBytes":45021}`.
 *
 *   node .bench/bench/tools/engine-farm.js COUNT MODEL
 */
import { createServer as createHttpServer } from 'node:http';
import { AddressInfo, createServer, Server } from 'node:net';
import { vllmMetricsText } from '../lib/vllm-metrics';

const [countArg, model] = process.argv.slice(2);
const count = Number(countArg);
if (!Number.isInteger(count) || count < 1 || count > 10000 || !model) {
  process.stderr.write('usage: engine-farm COUNT MODEL\n');
  process.exit(2);
}

const bodies = new Map<number, Buffer>();
const notFound = Buffer.from('Not Found');

// One HTTP parser for every port: each listener hands its connections to it.
const http = createHttpServer((req, res) => {
  const body =
    req.url?.split('?')[0] === '/metrics' ? bodies.get(req.socket.localPort ?? 0) : undefined;
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
    servers.push(server);
    const body = vllmMetricsText({
      model,
      kvUsage: ((i * 37) % 70) / 100,
      numGpuBlocks: 2048 + (i % 7) * 16,
      running: i % 40,
      waiting: i % 3,
      seed: i,
    });
    bodies.set((server.address() as AddressInfo).port, Buffer.from(body));
  }
  const ports = [...bodies.keys()];
  process.stdout.write(`${JSON.stringify({ ports, bodyBytes: bodies.get(ports[0])?.length })}\n`);
  process.once('SIGTERM', () => {
    for (const s of servers) s.close();
    http.closeAllConnections();
    process.exit(0);
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`engine-farm failed: ${String(err)}\n`);
  process.exit(1);
});
