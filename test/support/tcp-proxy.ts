import { createServer, Server, Socket, connect } from 'node:net';

/**
 * A TCP relay in front of a real server, so a test can take the server "away" (refuse and cut
 * every connection) and bring it back, without stopping the shared PostgreSQL itself.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private up = true;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    const ref: { proxy?: TcpProxy } = {};
    const server = createServer((client) => {
      const proxy = ref.proxy;
      if (!proxy?.up) {
        client.destroy();
        return;
      }
      const upstream = connect(targetPort, targetHost);
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.once('close', () => proxy.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    ref.proxy = new TcpProxy(server, typeof addr === 'object' && addr ? addr.port : 0);
    return ref.proxy;
  }

  /** Refuses new connections and cuts the open ones, as a stopped server would. */
  cut(): void {
    this.up = false;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.up = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
