import { DynamicModule, Global, Module } from '@nestjs/common';
import { EventPublisher, InProcessBus } from '@sluice/bus';
import { FrontendConfig } from '../config/frontend-config';
import { MonitorTransport } from './monitor-transport';

/**
 * The embedded launcher's in-process bus, for `TransportModule` to find; none with `--nats-url`.
 * Global because it is a value handed in from outside the module graph, like the config.
 */
@Global()
@Module({})
export class EmbeddedBusModule {
  static forRoot(bus: InProcessBus | undefined): DynamicModule {
    const providers = bus ? [{ provide: InProcessBus, useValue: bus }] : [];
    return { module: EmbeddedBusModule, providers, exports: providers.map((p) => p.provide) };
  }
}

/**
 * The frontend's bus: the transport the worker monitor listens on and the publisher beside it.
 */
@Module({
  providers: [
    {
      provide: MonitorTransport,
      inject: [FrontendConfig, { token: InProcessBus, optional: true }],
      useFactory: (config: FrontendConfig, bus: InProcessBus | undefined) =>
        MonitorTransport.create(config, bus ?? undefined),
    },
    {
      provide: EventPublisher,
      inject: [MonitorTransport],
      useFactory: (transport: MonitorTransport) => transport.publisher,
    },
  ],
  exports: [MonitorTransport, EventPublisher],
})
export class TransportModule {}
