import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** What a fake worker saw of one request. */
export interface SeenRequest {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type FakeHandler = (
  req: SeenRequest,
  res: ServerResponse,
  raw: IncomingMessage,
) => void | Promise<void>;

/**
 * A tiny worker written in the test (node:http): answers however the test says, for answers a
 * real worker would not give (huge bodies, broken streams). Register it with the frontend by
 * publishing a load report for `url`.
 */
export class FakeWorker {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly seen: SeenRequest[],
  ) {}

  static async start(handler: FakeHandler): Promise<FakeWorker> {
    const seen: SeenRequest[] = [];
    const server = createServer((raw, res) => {
      const chunks: Buffer[] = [];
      raw.on('data', (c: Buffer) => chunks.push(c));
      raw.on('end', () => {
        const req = { headers: raw.headers, body: Buffer.concat(chunks).toString('utf8') };
        seen.push(req);
        void Promise.resolve(handler(req, res, raw)).catch(() => res.destroy());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return new FakeWorker(server, `http://127.0.0.1:${port}`, seen);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Writes `total` bytes of `fill` in 64 KiB chunks, waiting for the socket to drain; resolves
 * 'aborted' as soon as the reader goes away, 'finished' when everything was written.
 */
export async function writeHuge(
  res: ServerResponse,
  total: number,
  fill = 'x',
): Promise<'aborted' | 'finished'> {
  const chunk = Buffer.alloc(64 * 1024, fill);
  let gone = false;
  res.once('close', () => (gone = !res.writableFinished));
  for (let sent = 0; sent < total && !gone; sent += chunk.length) {
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
    }
  }
  if (gone || res.destroyed) return 'aborted';
  await new Promise<void>((resolve) => res.end(resolve));
  return 'finished';
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
