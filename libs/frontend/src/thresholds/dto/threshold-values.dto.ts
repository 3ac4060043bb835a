import { ThresholdValueFields, ThresholdValuesBase } from './threshold-fields';

/** The threshold keys of docs/api.md#busy-thresholds and docs/architecture.md#busy-rule, each always present, `null` where none applies. */
@ThresholdValueFields()
export class ThresholdValuesDto extends ThresholdValuesBase {}
