import NodeModule from 'node:module';

/**
 * Loads a module with Node's own loader instead of jest's sandbox. PGlite's CommonJS build calls
 * dynamic import() (for node:module, fs/promises), which code loaded through jest's module
 * sandbox may not do without --experimental-vm-modules; loaded this way, nothing about it is
 * faked. The e2e setup (`pglite-outside-jest.ts`) calls it from `jest.mock` factories for every
 * spec.
 */
export function requireOutsideJest(id: string): unknown {
  // jest's `module` class extends Node's, so an instance's require() is Node's loader.
  const host = new NodeModule.Module(__filename);
  host.filename = __filename;
  host.paths = (
    NodeModule as unknown as { _nodeModulePaths(dir: string): string[] }
  )._nodeModulePaths(__dirname);
  return host.require(id);
}

export type OutsideJest = { requireOutsideJest: typeof requireOutsideJest };
