import { INestApplication, Logger } from '@nestjs/common';
import { ProxyService } from '../completions/proxy.service';
import { LifecycleService } from '../admission/lifecycle.service';

const POLL_MS = 50;

/**
 * Stops taking new work (readiness fails, new requests get a 503 to retry elsewhere), waits for
 * requests in flight to finish, up to `timeoutMs`, then closes the application.
 */
export async function drainAndClose(app: INestApplication, timeoutMs: number): Promise<void> {
  const logger = new Logger('Shutdown');
  app.get(LifecycleService).startDraining();
  const proxy = app.get(ProxyService);
  const deadline = Date.now() + timeoutMs;
  if (proxy.active > 0) logger.log(`draining ${proxy.active} request(s), up to ${timeoutMs} ms`);
  while (proxy.active > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  if (proxy.active > 0) logger.warn(`closing with ${proxy.active} request(s) still in flight`);
  await app.close();
  logger.log('stopped');
}

/** SIGTERM / SIGINT: drain, close, exit 0. A second signal exits at once. */
export function installSignalHandlers(app: INestApplication, timeoutMs: number): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1);
    stopping = true;
    new Logger('Shutdown').log(`${signal} received`);
    drainAndClose(app, timeoutMs).then(
      () => process.exit(0),
      (err: unknown) => {
        new Logger('Shutdown').error(`shutdown failed: ${String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
