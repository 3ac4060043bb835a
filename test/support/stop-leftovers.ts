import { stopEverything } from '@sluice/testkit';

/**
 * Set up before every e2e spec (`setupFilesAfterEnv` in jest.config.js): after the spec's own
 * hooks, every process it started through the testkit and left running (a test that failed
 * before its `stop()`, a spec that starts apps outside a `ProcessGroup`) is stopped with its
 * whole process group, so no child outlives the file and keeps jest's worker from exiting.
 */
afterAll(() => stopEverything(3000));
