import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo, Socket } from 'node:net';

/** How the fake engine answers one path. */
export type FakeRoute =
  | string
  | object
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'hang' }
  | { kind: 'huge'; bytes: number; line?: string };

/** A route that never answers (headers never sent). */
export const HANG: FakeRoute = { kind: 'hang' };
/** A route that streams `bytes` bytes of metric-looking lines, as fast as the client reads. */
export const huge = (bytes: number, line?: string): FakeRoute => ({ kind: 'huge', bytes, line });
export const statusRoute = (code: number, body = ''): FakeRoute => ({
  kind: 'status',
  status: code,
  body,
});

/**
 * An inference engine's HTTP API for tests: serves path → body maps on loopback (strings as
 * text, anything else as JSON; unknown paths 404), switches bodies at runtime, and can hang,
 * serve a huge body, go away (close every connection, refuse new ones) and come back on the
 * same port.
 */
export class FakeEngine {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly hits = new Map<string, number>();
  private port = 0;

  private constructor(private routes: Map<string, FakeRoute>) {}

  static async start(routes: Record<string, FakeRoute>, port = 0): Promise<FakeEngine> {
    const engine = new FakeEngine(new Map(Object.entries(routes)));
    await engine.listen(port);
    return engine;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** `127.0.0.1:<port>`: the worker id the bridge gives an unnamed target. */
  get hostPort(): string {
    return `127.0.0.1:${this.port}`;
  }

  set(path: string, route: FakeRoute): void {
    this.routes.set(path, route);
  }

  remove(path: string): void {
    this.routes.delete(path);
  }

  /** Requests seen for `path` so far. */
  requests(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  /** Goes away: closes the listener and every open connection (connections are refused). */
  async goAway(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
  }

  /** Comes back on the same port. */
  async comeBack(): Promise<void> {
    if (!this.server) await this.listen(this.port);
  }

  async close(): Promise<void> {
    await this.goAway();
  }

  private async listen(port: number): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    const route = this.routes.get(path);
    if (route === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    } else if (typeof route === 'string') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(route);
    } else if (isKind(route, 'status')) {
      res.writeHead(route.status, { 'content-type': 'text/plain' }).end(route.body ?? '');
    } else if (isKind(route, 'hang')) {
      // Never answers; the socket is destroyed by goAway() or by the client.
    } else if (isKind(route, 'huge')) {
      streamHuge(res, route.bytes, route.line ?? 'padding_metric{label="xxxxxxxxxxxxxxxx"} 1\n');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(route));
    }
  }
}

function isKind<K extends string>(r: object, kind: K): r is Extract<FakeRoute, { kind: K }> {
  return (r as { kind?: unknown }).kind === kind;
}

function streamHuge(res: ServerResponse, bytes: number, line: string): void {
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
  const chunk = Buffer.from(line.repeat(Math.max(1, Math.floor(65536 / line.length))));
  let sent = 0;
  const pump = (): void => {
    while (sent < bytes && !res.destroyed) {
      const piece = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
      sent += piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end();
  };
  res.on('error', () => undefined);
  pump();
}
