/** A bad flag or environment variable; the app prints it with the usage and exits with code 2. */
export class BridgeConfigError extends Error {
  constructor(
    readonly flag: string,
    readonly value: string,
    reason: string,
  ) {
    super(`invalid value '${value}' for ${flag}: ${reason}`);
    this.name = 'BridgeConfigError';
  }
}
