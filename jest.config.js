// Unit specs sit beside the code; e2e tests (real NATS, real HTTP, real workers) live in test/.

// Workers and the apps the e2e specs start run on jest's own Node (process.execPath): refuse to
// test any other runtime than the one of record, however jest was launched.
require('./tools/require-node').requireNode();

const { availableParallelism, tmpdir } = require('node:os');
const { join } = require('node:path');

// Every Node process of the run (jest's workers, the apps the e2e specs start: about 200) keeps
// the V8 code of the modules it compiles in one cache, so the next start of an app skips most of
// the compiling. Semantics are unchanged; Node checks each cached entry against its source.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'sluice-node-compile-cache');

const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
      },
    },
  ],
};
// Checked in order: the migrations are the one alias outside libs/.
const moduleNameMapper = {
  '^@sluice/migrations$': '<rootDir>/migrations',
  '^@sluice/(.*)$': '<rootDir>/libs/$1/src',
};

// The engine root (a whole Debian system) and the bench's build are no part of the test tree.
const modulePathIgnorePatterns = ['<rootDir>/.engines/', '<rootDir>/.bench/'];

module.exports = {
  // e2e tests start real processes; a per-project testTimeout is ignored in multi-project mode.
  testTimeout: 60000,
  // Two spec files at a time even on 2 cores (jest's default there is one): an e2e spec spends
  // most of its time waiting on its processes. Specs share nothing: each has its own NATS
  // namespace, databases, data directories and ports.
  maxWorkers: Math.max(2, availableParallelism() - 1),
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: [
        '<rootDir>/libs/**/*.spec.ts',
        '<rootDir>/apps/**/*.spec.ts',
        '<rootDir>/bench/**/*.spec.ts',
        '<rootDir>/tools/**/*.spec.ts',
      ],
      transform,
      moduleNameMapper,
      modulePathIgnorePatterns,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      // Once per run: a temporary directory and a migrated embedded database to copy.
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      // The specs that open an embedded store in-process load PGlite outside jest's sandbox;
      // every spec stops the processes it left running.
      setupFilesAfterEnv: [
        '<rootDir>/test/support/pglite-outside-jest.ts',
        '<rootDir>/test/support/stop-leftovers.ts',
      ],
      transform,
      moduleNameMapper,
      modulePathIgnorePatterns,
    },
  ],
};
