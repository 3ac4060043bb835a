export * from './subjects';
export * from './kv-metrics.report';
export * from './openai-error';
export * from './token-estimate';
export * from './sse-data.parser';
export * from './nats-url';
export * from './redact';
export * from './reservation-share';
