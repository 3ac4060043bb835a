import { ThresholdValueFields, ThresholdValuesBase } from './threshold-fields';

/** The threshold keys of contract §3.2 and §5, each always present, `null` where none applies. */
@ThresholdValueFields()
export class ThresholdValuesDto extends ThresholdValuesBase {}
