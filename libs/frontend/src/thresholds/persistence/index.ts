export {
  ThresholdRepository,
  InvalidAuditQueryError,
  ChangeOutcomeUnknownError,
  VersionMismatchError,
  NO_VERSION,
  satisfies,
  type AppliedChange,
  type ChangeOptions,
  type RevertedChange,
  type StoredState,
  type VersionCondition,
  type AuditEntry,
  type AuditMeta,
  type AuditPage,
  type AuditQuery,
  type ThresholdPatch,
  type ThresholdValues,
  type WireThresholds,
} from './threshold.repository';
export { TypeOrmThresholdRepository } from './typeorm-threshold.repository';
export {
  createThresholdDataSource,
  type ThresholdDataSourceOptions,
  type ThresholdStoreLogger,
} from './threshold-data-source';
export { runMigrations, revertLastMigration, pendingMigrations } from './threshold-migrations';
export { ThresholdDatabase } from './threshold-database.service';
export type { RetryNotice } from './threshold-database.service';
export {
  TenantRepository,
  type StoredTenant,
  type TenantAction,
  type TenantAuditEntry,
  type TenantAuditMeta,
  type TenantAuditPage,
  type TenantKey,
  type TenantPage,
  type TenantRecord,
  type TenantSettings,
} from './tenant.repository';
export { TypeOrmTenantRepository } from './typeorm-tenant.repository';
