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
  ['request-metrics', 'ttft-prediction'],
  ['admission'],
  ['completions'],
  ['http', 'health', 'threshold-admin', 'status', 'engine-bridge', 'metrics-endpoint'],
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

export default tseslint.config(
  {
    // TypeScript only: the few JS files (configs, tools, container helpers) are not part of the build.
    ignores: [
      'dist/**',
      '.bench/**',
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
