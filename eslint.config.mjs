// @ts-check
import eslint from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import tseslint from 'typescript-eslint';

/**
 * The frontend's floors, ground first (docs/architecture.md): each folder of libs/frontend/src is
 * one Nest module and may import only the folders on floors below its own, so dependencies run
 * one way. The files at the root (FrontendModule, bootstrap, index) put the top floor together.
 */
export const FRONTEND_FLOORS = [
  ['config'],
  ['metrics'],
  ['errors', 'request-body'],
  ['priority'],
  ['transport'],
  ['thresholds'],
  ['worker-monitor'],
  ['request-metrics', 'ttft-prediction', 'tenants'],
  ['admission'],
  ['completions'],
  ['http', 'health', 'threshold-admin', 'status', 'engine-bridge', 'metrics-endpoint'],
  ['tenant-admin'],
];

const FRONTEND = 'libs/frontend/src';
const frontendFolders = FRONTEND_FLOORS.flat();
const frontendBoundaries = {
  files: [`${FRONTEND}/**/*.ts`],
  plugins: { boundaries },
  settings: {
    'import/resolver': { node: { extensions: ['.ts', '.js'] } },
    'boundaries/elements': [
      ...frontendFolders.map((folder) => ({
        type: folder,
        pattern: `${FRONTEND}/${folder}`,
        partialMatch: false,
      })),
    ],
    'boundaries/files': [{ category: 'frontend-root', pattern: `${FRONTEND}/*.ts` }],
  },
  rules: {
    'boundaries/dependencies': [
      'error',
      {
        default: 'allow',
        policies: [
          ...FRONTEND_FLOORS.flatMap((floor, level) =>
            floor.map((folder) => ({
              from: { element: { type: folder } },
              disallow: {
                to: [
                  {
                    element: {
                      types: {
                        anyOf: FRONTEND_FLOORS.slice(level)
                          .flat()
                          .filter((f) => f !== folder),
                      },
                    },
                  },
                  { file: { categories: 'frontend-root' } },
                ],
              },
              message: `${folder}/ may import only folders on lower floors (eslint.config.mjs, FRONTEND_FLOORS)`,
            })),
          ),
        ],
      },
    ],
  },
};

/**
 * The libraries' floors (CONTRIBUTING.md): the @sluice/ libraries each library may import, tests
 * and fixtures aside (they may also import @sluice/testkit). Apps sit on top and may import any
 * library but testkit.
 */
export const LIB_IMPORTS = {
  contracts: [],
  cli: ['contracts'],
  bus: ['contracts'],
  client: ['contracts'],
  testkit: ['contracts', 'cli'],
  bridge: ['contracts', 'bus', 'cli'],
  'sim-worker': ['contracts', 'bus', 'cli'],
  frontend: ['contracts', 'bus', 'cli', 'bridge', 'migrations'],
};

const libFloors = Object.entries(LIB_IMPORTS).map(([lib, allowed]) => ({
  files: [`libs/${lib}/src/**/*.ts`],
  ignores: ['**/*.spec.ts', '**/*.fixture.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: ['@sluice/*', ...allowed.map((a) => `!@sluice/${a}`)],
            message: `libs/${lib} may import only ${allowed.length > 0 ? allowed.map((a) => `@sluice/${a}`).join(', ') : 'no other @sluice/ library'} (eslint.config.mjs, LIB_IMPORTS)`,
          },
        ],
      },
    ],
  },
}));

const appFloor = {
  files: ['apps/**/*.ts'],
  ignores: ['**/*.spec.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: [
          { name: '@sluice/testkit', message: 'apps never import the test kit (CONTRIBUTING.md)' },
        ],
      },
    ],
  },
};

export default tseslint.config(
  {
    // TypeScript only: the few JS files (configs, tools, container helpers) are not part of the build.
    ignores: [
      'dist/**',
      '.bench/**',
      '.engines/**',
      'node_modules/**',
      'coverage/**',
      'data/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  frontendBoundaries,
  ...libFloors,
  appFloor,
  {
    files: ['test/**/*.ts', '**/*.spec.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
