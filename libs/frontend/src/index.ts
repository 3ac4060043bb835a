export { FrontendModule } from './frontend.module';
export { AdmissionPolicy, AdmissionRejectedError } from './admission/admission-policy';
export type { AdmissionRequest } from './admission/admission-policy';
export { PRIORITY_CLASSES } from './config/priority';
export type { PriorityClass } from './config/priority';
export { FrontendConfig } from './config/frontend-config';
export type { AdmissionControl, RouterMode, GlobalThresholds } from './config/frontend-config';
export { FrontendConfigError } from './config/frontend-config.error';
export { parseFrontendFlags, FRONTEND_USAGE } from './config/parse-frontend-flags';
export { createFrontendApp } from './bootstrap';
export type { FrontendHandle } from './bootstrap';
// Schema management for the threshold store, used by the migrate app and deployment tooling.
export {
  createThresholdDataSource,
  runMigrations,
  revertLastMigration,
} from './thresholds/persistence';
