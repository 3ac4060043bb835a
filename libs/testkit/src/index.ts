/**
 * Helpers shared by the e2e tests (test/) and the benchmarks (bench/): waiting, free ports,
 * contract-shaped load reports, reading Prometheus text. Never imported by the services.
 */
export * from './metrics-text';
export * from './reports';
export * from './wait';
export * from './fake-engine';
