import { CreateThresholdTables1764460800000 } from './1764460800000-CreateThresholdTables';

/**
 * Every migration, oldest first. Listed by hand rather than found by a glob so the same list
 * works compiled in dist/ and under jest/swc; a new migration must be added here.
 */
export const ALL_MIGRATIONS = [CreateThresholdTables1764460800000];
