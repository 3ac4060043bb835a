import { FrontendConfig } from '../config/frontend-config';

const show = (v: number | null): string => (v === null ? 'unset' : String(v));

/** The one startup line contract §2 asks for: is rejection on, and with which thresholds. */
export function describeAdmission(config: FrontendConfig): string {
  const t = config.thresholds;
  const values =
    `active_decode_blocks_threshold=${show(t.activeDecodeBlocks)} ` +
    `active_prefill_tokens_threshold=${show(t.activePrefillTokens)} ` +
    `active_prefill_tokens_threshold_frac=${show(t.activePrefillTokensFrac)}`;
  return config.admissionControl === 'token-capacity'
    ? `busy-worker rejection ENABLED (admission-control token-capacity): ${values}`
    : `busy-worker rejection DISABLED (admission-control none; thresholds kept, not applied): ${values}`;
}
