/**
 * A command line the program cannot run with. `parseOrExit` prints its message with the usage
 * text and exits with code 2; each app's own error class extends this one.
 */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A flag, variable or argument with a refused value, or a command line that cannot be read (an
 * unknown flag, a missing value); the message names the flag. `message` is the whole sentence,
 * by default "invalid value 'X' for --flag: reason".
 */
export class FlagValueError extends UsageError {
  override name = 'FlagValueError';

  constructor(
    readonly flag: string,
    readonly value: string,
    reason: string,
    message = valueMessage(flag, value, reason),
  ) {
    super(message);
  }
}

/** "invalid value 'X' for --flag: reason": what a refused value prints. */
export function valueMessage(flag: string, value: string, reason: string): string {
  return `invalid value '${value}' for ${flag}: ${reason}`;
}

/**
 * Thrown by a flag's `parse` for text it refuses. The parser adds where the text came from;
 * `shown` replaces the text in the message when it may hold a secret.
 */
export class InvalidFlagValue extends Error {
  override name = 'InvalidFlagValue';

  constructor(
    readonly reason: string,
    readonly shown?: string,
  ) {
    super(reason);
  }
}
