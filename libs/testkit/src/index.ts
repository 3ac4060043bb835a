/**
 * Helpers shared by the e2e tests (test/) and the benchmarks (bench/): starting the apps and
 * private servers, waiting, free ports, contract-shaped load reports, reading Prometheus text.
 * Never imported by the services.
 */
export * from './apps';
export * from './completion-client';
export * from './fake-engine';
export * from './llama-server';
export * from './metrics-text';
export * from './nats-server';
export * from './process';
export * from './process-group';
export * from './reports';
export * from './wait';
