import { realEngineUnavailable } from '@sluice/testkit';

/** Set by `.ci/run`: a machine that should have the real engine fails instead of skipping. */
export const REQUIRE_REAL_ENGINE_ENV = 'SLUICE_REQUIRE_REAL_ENGINE';

/**
 * `describe` for specs against Debian's real llama-server (`npm run engines:setup`). Where it
 * cannot run, the spec says why in one line and is skipped, never passed; with
 * `SLUICE_REQUIRE_REAL_ENGINE=1` it fails instead.
 */
export function describeRealEngine(name: string, fn: () => void): void {
  const why = realEngineUnavailable();
  if (!why) {
    describe(name, fn);
  } else if (process.env[REQUIRE_REAL_ENGINE_ENV] === '1') {
    describe(name, () => {
      it('has the real llama.cpp server', () => {
        throw new Error(`the real llama.cpp server cannot run here: ${why}`);
      });
    });
  } else {
    process.stderr.write(`${name}: skipped, the real llama.cpp server cannot run here: ${why}\n`);
    describe.skip(name, fn);
  }
}
