import { FrontendConfig } from '../config/frontend-config';
import { THRESHOLD_SPECS } from '../config/threshold-keys';

const show = (v: number | null): string => (v === null ? 'unset' : String(v));

/** The one startup line contract §2 asks for: is rejection on, and with which thresholds. */
export function describeAdmission(config: FrontendConfig): string {
  const t = config.thresholds;
  const values = THRESHOLD_SPECS.map((s) => `${s.wire}=${show(t[s.key])}`).join(' ');
  return config.admissionControl === 'token-capacity'
    ? `busy-worker rejection ENABLED (admission-control token-capacity): ${values}`
    : `busy-worker rejection DISABLED (admission-control none; thresholds kept, not applied): ${values}`;
}
