import { natsServerOptions } from '@sluice/contracts';
import type { ConnectionOptions } from 'nats';

/** Pause between connection attempts, whatever made the last one fail. */
const RECONNECT_WAIT_MS = 500;

/**
 * The connection options of every app's NATS client (frontend, worker, bridge, embedded), in one
 * place so they cannot drift. The client retries forever, from the first attempt on: a server
 * down at boot or refusing the credentials ("Authorization Violation") is retried like any other
 * failure. By default nats.js gives up for good after two auth errors in a row, so fixing the
 * server's users later would never reach an app that is already running.
 */
export function natsConnectionOptions(
  url: string,
  name: string,
): ConnectionOptions & { servers: string } {
  return {
    ...natsServerOptions(url),
    name,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_WAIT_MS,
    waitOnFirstConnect: true,
    ignoreAuthErrorAbort: true,
  };
}
