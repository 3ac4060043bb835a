import { connect, createServer, Server, Socket } from 'node:net';

/**
 * A TCP relay in front of PostgreSQL for the failures a reset cannot show: it can lose the answer
 * to a COMMIT (the server commits, the client never hears back: an outcome the client cannot
 * know), and it can freeze (connections stay open, nothing is answered, like a hung server or a
 * partition). Otherwise everything is relayed untouched.
 */
export class PgFaultProxy {
  private readonly sockets = new Set<Socket>();
  private readonly held: Array<() => void> = [];
  private armed: (() => void) | undefined;
  private isFrozen = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<PgFaultProxy> {
    const ref: { proxy?: PgFaultProxy } = {};
    const server = createServer((client) => ref.proxy?.accept(client, targetPort, targetHost));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    ref.proxy = new PgFaultProxy(server, typeof addr === 'object' && addr ? addr.port : 0);
    return ref.proxy;
  }

  /** Resolves once the next COMMIT has been delivered and its connection cut. */
  cutNextCommit(): Promise<void> {
    return new Promise((resolve) => (this.armed = resolve));
  }

  freeze(): void {
    this.isFrozen = true;
    for (const s of this.sockets) s.pause();
  }

  thaw(): void {
    this.isFrozen = false;
    for (const s of this.sockets) s.resume();
    for (const start of this.held.splice(0)) start();
  }

  async close(): Promise<void> {
    this.thaw();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, port: number, host: string): void {
    client.on('error', () => undefined);
    if (!this.isFrozen) return this.relay(client, port, host);
    client.pause(); // accepted by the kernel, never answered while frozen
    this.held.push(() => this.relay(client, port, host));
  }

  private relay(client: Socket, port: number, host: string): void {
    if (client.destroyed) return;
    const upstream = connect(port, host);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      const done = this.armed;
      if (!done || !chunk.includes('COMMIT')) return;
      this.armed = undefined;
      upstream.removeAllListeners('data'); // the server's reply never reaches the client
      setTimeout(() => {
        client.destroy();
        upstream.destroy();
        done();
      }, 200);
    });
    client.resume();
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }
}
