import { rmSync } from 'node:fs';
import type { ThresholdValues } from '../../libs/frontend/src/thresholds/persistence';
import { createTestDatabase } from './database';

/** Who made a change, as the admin API passes it to the repository. */
export const META = { actor: 'alice', source: '127.0.0.1', requestId: 'req-1' };

/** Every per-model key unset. */
export const NONE: ThresholdValues = {
  activeDecodeBlocks: null,
  activePrefillTokens: null,
  activePrefillTokensFrac: null,
  waitingRequests: null,
  admissionControl: null,
  ttftSloMs: null,
};

/** Where a store spec keeps its thresholds: a database URL, or an embedded data directory. */
export interface Store {
  databaseUrl: string | null;
  dataDir: string;
  cleanUp(): Promise<void>;
}

/** A fresh PostgreSQL database (`name` prefixes it), dropped by `cleanUp`. */
export async function postgresStore(name: string): Promise<Store> {
  const db = await createTestDatabase(name);
  return { databaseUrl: db.url(), dataDir: '', cleanUp: () => db.drop() };
}

/** The embedded database in `dataDir`, removed by `cleanUp`. */
export function pgliteStore(dataDir: string): Promise<Store> {
  const cleanUp = () => Promise.resolve(rmSync(dataDir, { recursive: true }));
  return Promise.resolve({ databaseUrl: null, dataDir, cleanUp });
}
