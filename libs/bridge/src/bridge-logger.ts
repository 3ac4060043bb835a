import { Logger } from '@nestjs/common';

/** Where the bridge writes; Nest's Logger by default, anything with these methods in tests. */
export interface BridgeLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function defaultBridgeLogger(): BridgeLogger {
  return new Logger('EngineBridge');
}
