import { PriorityLabel } from '../metrics/metric-names';

/**
 * The priority class of a request (contract §8), as the `priority` label of the admission
 * counters. Every request is `standard` until the class is read from the request
 * (`x-sluice-priority`); this function is the one place that decides it.
 */
export function priorityOf(_headers: Readonly<Record<string, unknown>>): PriorityLabel {
  return 'standard';
}
