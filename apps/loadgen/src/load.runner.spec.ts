import { OVERLOAD_MESSAGE } from '@sluice/contracts';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { LoadRun } from './load.runner';
import { parseLoadgenArgs } from './loadgen.options';

type Handler = (index: number, res: ServerResponse) => void;

/** A loopback stand-in for Sluice; the request index is read back from the prompt. */
async function listen(handler: Handler): Promise<Server> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(Number(/Request (\d+):/.exec(body)?.[1]), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

function run(port: number, flags: string[]): LoadRun {
  const command = parseLoadgenArgs(['--url', `http://127.0.0.1:${port}`, '--quiet', ...flags]);
  if (command.kind !== 'run') throw new Error('expected a run');
  return new LoadRun(command.options, { write: () => true });
}

const overload = { message: OVERLOAD_MESSAGE, type: 'service_unavailable', code: 503 };

describe('LoadRun against a loopback server', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await close(server);
    server = undefined;
  });

  it('counts 200s and 503s separately and measures TTFT at the first SSE event', async () => {
    server = await listen((i, res) => {
      if (i % 3 === 2) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify(overload));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
      setTimeout(() => {
        res.write('data: {"choices":[],"usage":{"completion_tokens":5}}\n\n');
        res.end('data: [DONE]\n\n');
      }, 500);
    });

    const { summary, unreachable } = await run(portOf(server), [
      '--rate', '100', '--duration', '0.3', '--prompt-tokens', '20',
    ]).execute(); // prettier-ignore

    expect(summary).toMatchObject({ arrivals: 30, sent: 30, ok_200: 20, rejected_503: 10 });
    expect(summary).toMatchObject({ other_errors: 0, dropped: 0, aborted: 0 });
    expect(summary.rejection_ratio).toBeCloseTo(1 / 3, 3);
    expect(summary.output_tokens).toBe(100);
    // TTFT is taken at the first event, not at the end half a second later: compared with the
    // run's own latencies rather than a wall-clock bound, so a busy machine cannot fail it.
    expect(summary.latency_p50_ms).toBeGreaterThanOrEqual(500);
    expect(summary.ttft_p99_ms).toBeLessThan(summary.latency_p50_ms as number);
    expect(unreachable).toBeNull();
  });

  it('drops arrivals beyond --max-inflight and aborts what outlives the drain timeout', async () => {
    server = await listen(() => undefined); // never answers

    const { summary } = await run(portOf(server), [
      '--rate', '50', '--duration', '0.2', '--max-inflight', '3', '--drain-timeout', '0.1',
    ]).execute(); // prettier-ignore

    expect(summary).toMatchObject({ arrivals: 10, sent: 3, dropped: 7, aborted: 3, ok_200: 0 });
  });

  it('reports the target as unreachable when every connection is refused', async () => {
    const probe = await listen(() => undefined);
    const port = portOf(probe);
    await close(probe);

    const { summary, unreachable } = await run(port, [
      '--rate',
      '20',
      '--duration',
      '0.2',
    ]).execute();

    expect(summary).toMatchObject({ sent: 4, other_errors: 4 });
    expect(summary.other_error_kinds).toEqual({ ECONNREFUSED: 4 });
    expect(unreachable).toContain('could not reach');
  });
});
