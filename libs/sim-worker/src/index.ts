export { createWorkerApp } from './worker-app.factory';
export type { WorkerApp } from './worker-app.factory';
export { parseWorkerFlags, WORKER_USAGE } from './config/worker-flags.parser';
export { WorkerConfigError } from './config/worker-config.error';
export type { MetricsFormat, WorkerOptions } from './config/worker-options';
