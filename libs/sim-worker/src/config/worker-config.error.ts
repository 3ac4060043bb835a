import { FlagValueError } from '@sluice/cli';

/** A flag with a value the worker cannot run with; the message names both. */
export class WorkerConfigError extends FlagValueError {
  override name = 'WorkerConfigError';
}
