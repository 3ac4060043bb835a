import { FrontendConfig } from '../config/frontend-config';

/** The startup line saying where priority classes come from and what they change. */
export function describePriority(config: FrontendConfig): string {
  if (config.priorityHeader === null) {
    return 'priority classes off (--priority-header none): every request is standard';
  }
  const f = config.priorityFactors;
  const keys = config.priorityKeys;
  return (
    `priority class from header ${config.priorityHeader} (critical, standard, sheddable; ` +
    `absent: standard): sheddable judged with thresholds x ${f.sheddable}, critical x ${f.critical}` +
    (keys === null ? '' : `; classes capped per API key (${keys.length} keys listed)`)
  );
}
