import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * PostgreSQL text cannot hold U+0000 (the query fails), and `pg` encodes an unpaired surrogate
 * as U+FFFD (the stored name differs from the one asked for): neither is a model name.
 */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isStorableText(value: unknown): value is string {
  return typeof value === 'string' && !value.includes('\u0000') && !UNPAIRED_SURROGATE.test(value);
}

/** The `model` column is varchar(256). */
export const MODEL_MAX_LENGTH = 256;

/** What POST /busy_threshold accepts as `model`: 1..256 storable characters. */
export function isModelName(value: unknown): value is string {
  return isStorableText(value) && value.length > 0 && value.length <= MODEL_MAX_LENGTH;
}

/** A string the threshold store can keep exactly as given. */
export function IsStorableText(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStorableText',
      validator: {
        validate: (value: unknown): boolean => isStorableText(value),
        defaultMessage: () => '$property must not contain NUL characters or unpaired surrogates',
      },
    },
    options,
  );
}
