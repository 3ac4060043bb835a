import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { SimEngine } from './engine/sim-engine';
import { KvMetricsReporter } from './reporting/kv-metrics.reporter';

/**
 * Orders start and shutdown. Nest runs `beforeApplicationShutdown` before it closes the HTTP
 * server, so consumers hear worker_down first, then in-flight requests are aborted (streams cut,
 * unary requests answered 503) and the server closes without waiting for them.
 */
@Injectable()
export class WorkerLifecycle implements BeforeApplicationShutdown {
  constructor(
    private readonly reporter: KvMetricsReporter,
    private readonly engine: SimEngine,
  ) {}

  start(endpoint: string): void {
    this.reporter.start(endpoint);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.reporter.stop();
    this.engine.close();
    // Lets the aborted unary requests send their 503 before the server drops every socket.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
