import { FlagValueError } from '@sluice/cli';

/** A bad flag or environment variable; `main` prints it with the usage and exits with code 2. */
export class FrontendConfigError extends FlagValueError {
  override name = 'FrontendConfigError';
}
