export { InProcessBus } from './in-process-bus';
export { InProcessTransport } from './in-process.transport';
export { NamespacedNatsServer } from './namespaced-nats.server';
export { ServerEventPublisher } from './server-event-publisher';
export { EventPublisher, InProcessEventPublisher, NatsEventPublisher } from './event-publisher';
export { natsConnectionOptions } from './nats-options';
