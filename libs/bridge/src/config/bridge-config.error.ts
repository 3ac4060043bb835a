import { FlagValueError } from '@sluice/cli';

/** A bad flag or environment variable; the app prints it with the usage and exits with code 2. */
export class BridgeConfigError extends FlagValueError {
  override name = 'BridgeConfigError';
}
