import type { OutsideJest } from './outside-jest';

/**
 * Set up before every e2e spec (`setupFilesAfterEnv` in jest.config.js): the specs that open an
 * embedded store in-process get the real PGlite modules, loaded by Node's own loader instead of
 * jest's sandbox (see `outside-jest.ts` for why). Nothing about them is faked, and a spec that
 * never loads PGlite (most only start apps) pays nothing for it.
 */
jest.mock('@electric-sql/pglite', () =>
  jest.requireActual<OutsideJest>('./outside-jest').requireOutsideJest('@electric-sql/pglite'),
);
jest.mock('@electric-sql/pglite/node-postgres', () =>
  jest
    .requireActual<OutsideJest>('./outside-jest')
    .requireOutsideJest('@electric-sql/pglite/node-postgres'),
);
