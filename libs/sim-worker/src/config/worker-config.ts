import { WorkerOptions } from './worker-options';

/** DI token for the options of the running worker (a class, so no string token is needed). */
export class WorkerConfig {
  constructor(readonly options: WorkerOptions) {}
}
