import { ArgumentMetadata, Injectable, PipeTransform, Type, ValidationPipe } from '@nestjs/common';
import {
  getMetadataStorage,
  isObject,
  ValidationTypes,
  ValidatorConstraintInterface,
} from 'class-validator';
import {
  ChatCompletionRequestDto,
  CompletionRequestDto,
  EmbeddingRequestDto,
} from './dto/openai-request.dto';

type Body = Record<string, unknown>;

/** One decorator's check, taken from class-validator's metadata for the DTO. */
interface Check {
  readonly constraints: unknown[];
  readonly each: boolean;
  readonly validators: readonly ValidatorConstraintInterface[];
}

/** A property's checks; `skip` holds the conditions of `@IsOptional()` and `@ValidateIf()`. */
interface PropertyChecks {
  readonly property: string;
  readonly skip: ReadonlyArray<(object: Body, value: unknown) => boolean>;
  readonly checks: readonly Check[];
}

const KNOWN = new Set<string>([
  ValidationTypes.CUSTOM_VALIDATION,
  ValidationTypes.CONDITIONAL_VALIDATION,
]);

/**
 * The DTO's decorators as class-validator registered them, grouped by property as its
 * executor groups them. A decorator this pass cannot run (nested, promise, is-defined, async,
 * or with a `validateIf` option) fails at load, so none is skipped silently.
 */
export function compileChecks(dto: Type<unknown>): PropertyChecks[] {
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(dto, '', false, false);
  const grouped = storage.groupByPropertyName(metadatas);
  return Object.entries(grouped).map(([property, list]) => ({
    property,
    skip: list
      .filter((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION)
      .map((m) => m.constraints[0] as (object: Body, value: unknown) => boolean),
    checks: list
      .map((m): Check | undefined => {
        if (!KNOWN.has(m.type) || m.validateIf) {
          throw new Error(
            `OpenAiBodyPipe cannot run ${dto.name}.${property}'s ${m.name ?? m.type}`,
          );
        }
        if (m.type !== ValidationTypes.CUSTOM_VALIDATION) return undefined;
        const constraints = storage.getTargetValidatorConstraints(m.constraintCls);
        if (constraints.some((c) => c.async)) {
          throw new Error(`OpenAiBodyPipe cannot run ${dto.name}.${property}'s async ${m.name}`);
        }
        return {
          constraints: m.constraints,
          each: m.each === true,
          validators: constraints.map((c) => c.instance),
        };
      })
      .filter((c): c is Check => c !== undefined),
  }));
}

/** As class-validator's executor runs it: an `each` decorator checks every element of an array. */
function passes(check: Check, dto: Type<unknown>, object: Body, property: string): boolean {
  const value = object[property];
  const args = { targetName: dto.name, property, object, value, constraints: check.constraints };
  const each = check.each && Array.isArray(value);
  for (const validator of check.validators) {
    if (!each) {
      if (validator.validate(value, args) !== true) return false;
    } else {
      for (const v of value) if (validator.validate(v, args) !== true) return false;
    }
  }
  return true;
}

function valid(dto: Type<unknown>, rules: readonly PropertyChecks[], body: Body): boolean {
  for (const { property, skip, checks } of rules) {
    if (skip.some((condition) => !condition(body, body[property]))) continue;
    for (const check of checks) if (!passes(check, dto, body, property)) return false;
  }
  return true;
}

const DTOS: ReadonlyArray<Type<unknown>> = [
  ChatCompletionRequestDto,
  CompletionRequestDto,
  EmbeddingRequestDto,
];

/**
 * Validates the OpenAI request bodies with their DTOs' class-validator decorators and returns
 * the body untouched. A valid body is recognised by running the decorators' own validators
 * on it directly: this runs on every proxied request, where `ValidationPipe`'s
 * class-transformer copy and per-call metadata walk cost far more than the checks. Any other
 * body goes to `ValidationPipe`, so the 400 and its messages are class-validator's own.
 */
@Injectable()
export class OpenAiBodyPipe implements PipeTransform {
  private readonly rules = new Map(DTOS.map((dto) => [dto, compileChecks(dto)]));
  private readonly reference = new ValidationPipe({ whitelist: false, transform: false });

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const rules =
      metadata.type === 'body' ? this.rules.get(metadata.metatype as Type<unknown>) : undefined;
    if (!rules) return value;
    if (isObject(value) && valid(metadata.metatype as Type<unknown>, rules, value as Body)) {
      return value;
    }
    return this.reference.transform(value, metadata);
  }
}
