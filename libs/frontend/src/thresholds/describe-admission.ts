import { FrontendConfig } from '../config/frontend-config';
import { NUMERIC_SPECS } from '../config/threshold-keys';

const show = (v: number | null): string => (v === null ? 'unset' : String(v));

const MODE = {
  'token-capacity': 'busy-worker rejection ENABLED (admission-control token-capacity)',
  shadow:
    'busy-worker rejection SHADOW (admission-control shadow; would-be rejections counted, ' +
    'every request admitted)',
  none: 'busy-worker rejection DISABLED (admission-control none; thresholds kept, not applied)',
} as const;

/**
 * The one startup line docs/configuration.md asks for: is rejection on, and with which thresholds. Models
 * may override the mode (`admission_control`); they are listed by GET /busy_threshold.
 */
export function describeAdmission(config: FrontendConfig): string {
  const t = config.thresholds;
  const values = NUMERIC_SPECS.map((s) => `${s.wire}=${show(t[s.key])}`).join(' ');
  const hysteresis =
    config.busyReleaseFactor === 1 && config.busyMinDwellMs === 0
      ? ''
      : `; busy ranks turn free at threshold x ${config.busyReleaseFactor}, ` +
        `a new busy/free state is kept ${config.busyMinDwellMs} ms`;
  const slo = t.ttftSloMs;
  const objective =
    slo === null
      ? ''
      : `; TTFT objective ${slo} ms (x each class's priority factor), ` +
        `sampling ${config.ttftSloSample} of its would-be refusals`;
  return `${MODE[config.admissionControl]}: ${values}${hysteresis}${objective}`;
}
