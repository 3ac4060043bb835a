import { Check, Column, ValueTransformer } from 'typeorm';
import {
  isEnumSpec,
  THRESHOLD_SPECS,
  ThresholdSpecShape,
  ThresholdValues,
} from '../../../config/threshold-keys';

/** pg returns int8 as a string (it may exceed 2^53); thresholds are validated far below that. */
const int8AsNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/**
 * The entity's per-model properties (named like their keys); a typed base with no members at
 * run time, the columns come from the ThresholdColumns decorator.
 */
export const ThresholdColumnsBase = class {} as new () => {
  -readonly [K in keyof ThresholdValues]: ThresholdValues[K];
};

/**
 * The CHECK each migration writes next to its column: the range (or the words) the API
 * validates, so a hand-edited row cannot disable admission. A float column also refuses
 * 'Infinity'. The words are the table's own, never user input.
 */
export function checkOf(spec: ThresholdSpecShape): string {
  const c = `"${spec.wire}"`;
  if (isEnumSpec(spec)) return `${c} IN (${spec.values.map((v) => `'${v}'`).join(', ')})`;
  const { min, max } = spec.range;
  if (max !== undefined) return `${c} BETWEEN ${min} AND ${max}`;
  return spec.column === 'bigint' ? `${c} >= ${min}` : `${c} >= ${min} AND ${c} < 'Infinity'`;
}

/**
 * One nullable column per key (named like its wire key, `null` = no per-model value) and
 * its CHECK, from THRESHOLD_SPECS; the migrations must create the same (test/threshold-store).
 * A spec passes a longer table to show what a new entry brings.
 */
export function ThresholdColumns(
  specs: readonly ThresholdSpecShape[] = THRESHOLD_SPECS,
): ClassDecorator {
  return (target) => {
    for (const spec of specs) {
      const transformer = spec.column === 'bigint' ? { transformer: int8AsNumber } : {};
      Column({ name: spec.wire, type: spec.column, nullable: true, ...transformer })(
        target.prototype as object,
        spec.key,
      );
      Check(`CHK_model_thresholds_${spec.check}`, checkOf(spec))(target);
    }
  };
}
