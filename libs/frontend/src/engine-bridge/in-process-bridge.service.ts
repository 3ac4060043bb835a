import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { EngineBridge, EngineName, type BridgeWorkerStatus } from '@sluice/bridge';
import { EventPublisher } from '@sluice/bus';
import { register } from 'prom-client';
import { FrontendConfig } from '../config/frontend-config';

/**
 * docs/engines.md, `--engine-target ENGINE=[NAME=]URL`: the engine bridge run inside the frontend,
 * one bridge per engine kind, publishing on the frontend's own bus, so a stock engine needs no
 * NATS and no extra process. Its series go to the frontend's /metrics.
 */
@Injectable()
export class InProcessBridge implements OnModuleDestroy {
  private readonly logger = new Logger('EngineBridge');
  private bridges: EngineBridge[] = [];

  constructor(
    private readonly config: FrontendConfig,
    private readonly publisher: EventPublisher,
  ) {}

  /** Starts scraping every configured engine; a no-op without `--engine-target`. */
  async start(): Promise<void> {
    if (this.bridges.length > 0) return;
    const byEngine = new Map<EngineName, string[]>();
    for (const { engine, spec } of this.config.engineTargets) {
      byEngine.set(engine, [...(byEngine.get(engine) ?? []), spec]);
    }
    for (const [engine, targets] of byEngine) {
      const bridge = new EngineBridge({
        engine,
        targets,
        namespace: this.config.namespace,
        llamacppKvCache: this.config.llamacppKvCache,
        publisher: this.publisher,
        registry: register,
        source: `frontend bridge ${engine}`,
        logger: this.logger,
      });
      this.bridges.push(bridge);
      await bridge.start();
      this.logger.log(`scraping ${targets.length} ${engine} engine(s): ${targets.join(', ')}`);
    }
  }

  /** Every engine this frontend scrapes, for the status page. */
  status(): BridgeWorkerStatus[] {
    return this.bridges.flatMap((b) => b.status());
  }

  async onModuleDestroy(): Promise<void> {
    const bridges = this.bridges;
    this.bridges = [];
    await Promise.all(bridges.map((b) => b.stop()));
  }
}
