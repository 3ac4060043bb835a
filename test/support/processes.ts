import * as testkit from '@sluice/testkit';

export const NATS_URL = process.env.SLUICE_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

export {
  quietPort,
  Proc,
  spawnApp,
  spawnNode,
  startBridge,
  startEmbedded,
  storeDataDir,
  tempDataDir,
  uniqueNamespace,
  waitFor,
  type FrontendStarted as FrontendProcess,
  type Started as WorkerProcess,
} from '@sluice/testkit';

/** The shared starter with the tests' defaults: the machine's NATS, a fresh namespace. */
export function startFrontend(
  flags: string[] = [],
  namespace = testkit.uniqueNamespace(),
  app = 'frontend',
): Promise<testkit.FrontendStarted> {
  return testkit.startFrontend({ natsUrl: NATS_URL, namespace, flags, app });
}

/** A real simulated worker; without NATS flags it publishes nothing and tests report for it. */
export function startWorker(flags: string[] = []): Promise<testkit.Started> {
  return testkit.startWorker({ flags });
}
