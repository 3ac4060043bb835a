/** A flag or option with a value the worker cannot run with; the message names both. */
export class WorkerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerConfigError';
  }
}
