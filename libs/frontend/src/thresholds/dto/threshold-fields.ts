import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsNumber, Max, Min, ValidateIf } from 'class-validator';
import {
  isEnumSpec,
  THRESHOLD_SPECS,
  ThresholdSpecShape,
  ThresholdValue,
} from '../../config/threshold-keys';
import { WireThresholdValues } from '../threshold-wire';

/**
 * The threshold fields of the admin API's DTOs, one per entry of THRESHOLD_SPECS, decorated as
 * if written out by hand. A DTO extends one of the typed bases below (which has no members at
 * run time: it only gives TypeScript the fields) and carries the matching class decorator.
 * Class decorators run after the property decorators of the class body, so a field declared
 * there (`model`) keeps its place before the thresholds in the OpenAPI document and in the
 * validation errors.
 */
export const ThresholdValuesBase = class {} as new () => WireThresholdValues;
export const ThresholdPatchBase = class {} as new () => Partial<WireThresholdValues>;

/** Present and not null: validate it. `null` clears the stored value; absent leaves it. */
const whenGiven = ValidateIf((_o: object, v: unknown) => v !== undefined && v !== null);

function openApi(spec: ThresholdSpecShape, example: ThresholdValue | null) {
  if (isEnumSpec(spec)) return { enum: [...spec.values], nullable: true, example };
  const { min, max } = spec.range;
  return {
    type: Number,
    nullable: true,
    minimum: min,
    ...(max === undefined ? {} : { maximum: max }),
    example,
  };
}

/** The class-validator rules of a value that is given (top to bottom, as written by hand). */
function rules(spec: ThresholdSpecShape): PropertyDecorator[] {
  if (isEnumSpec(spec)) return [IsIn([...spec.values])];
  const { min, max } = spec.range;
  if (spec.range.integer) return [IsInt(), Min(min), Max(max ?? Number.MAX_SAFE_INTEGER)];
  const finite = IsNumber({ allowNaN: false, allowInfinity: false });
  return max === undefined ? [finite, Min(min)] : [finite, Min(min), Max(max)];
}

/** TypeScript applies a property's decorators bottom-up; so does this, so metadata order matches. */
function decorate(target: object, wire: string, decorators: PropertyDecorator[]): void {
  for (const decorator of [...decorators].reverse()) decorator(target, wire);
}

/**
 * Every key, always present, `null` where none applies (the answers of docs/api.md#busy-thresholds).
 * `specs` is the table; a spec passes a longer one to show what a new entry brings.
 */
export function ThresholdValueFields(
  specs: readonly ThresholdSpecShape[] = THRESHOLD_SPECS,
): ClassDecorator {
  return (target) => {
    for (const spec of specs) {
      decorate(target.prototype as object, spec.wire, [
        ApiProperty(openApi(spec, spec.exampleInForce)),
      ]);
    }
  };
}

/** Every key, optional: a value sets it, `null` clears it, absent leaves it. */
export function ThresholdPatchFields(
  specs: readonly ThresholdSpecShape[] = THRESHOLD_SPECS,
): ClassDecorator {
  return (target) => {
    for (const spec of specs) {
      decorate(target.prototype as object, spec.wire, [
        ApiPropertyOptional(openApi(spec, spec.example)),
        whenGiven,
        ...rules(spec),
      ]);
    }
  };
}
