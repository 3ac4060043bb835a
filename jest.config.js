// Unit specs sit beside the code; e2e tests (real NATS, real HTTP, real workers) live in test/.

// Workers and the apps the e2e specs start run on jest's own Node (process.execPath): refuse to
// test any other runtime than the one of record, however jest was launched.
require('./tools/require-node').requireNode();

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
const moduleNameMapper = {
  '^@sluice/(.*)$': '<rootDir>/libs/$1/src',
};

module.exports = {
  // e2e tests start real processes; a per-project testTimeout is ignored in multi-project mode.
  testTimeout: 60000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts'],
      transform,
      moduleNameMapper,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      transform,
      moduleNameMapper,
    },
  ],
};
