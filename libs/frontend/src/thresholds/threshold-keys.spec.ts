import { ArgumentMetadata, BadRequestException, ValidationPipe } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import { getMetadataArgsStorage } from 'typeorm';
import { THRESHOLD_SPECS, ThresholdSpecShape } from '../config/threshold-keys';
import { ThresholdPatchFields, ThresholdValueFields } from './dto/threshold-fields';
import { ThresholdColumns } from './persistence/entities/threshold-columns';

/**
 * What adding a key takes: one entry in THRESHOLD_SPECS (plus its migration, and a threshold's
 * busy term). A hypothetical new threshold, and a hypothetical key whose value is a word, given
 * to the same decorators the real DTOs and entity use, must come out as a validated API field,
 * an OpenAPI property and a column with its CHECK.
 */
const QUEUED = {
  key: 'queuedTokens',
  flag: 'queued-tokens-threshold',
  wire: 'queued_tokens_threshold',
  range: { min: 1, integer: true },
  help: 'a rank is busy when more than N tokens are queued',
  column: 'bigint',
  check: 'queued_tokens',
  example: 500,
  exampleInForce: null,
  status: { label: 'queued tokens threshold', css: 'queued', over: 'waiting' },
} as const satisfies ThresholdSpecShape;
const WITH_QUEUED = [...THRESHOLD_SPECS, QUEUED];

/** A hypothetical key whose value is a word. */
const SPILL = {
  kind: 'enum',
  key: 'spillPolicy',
  flag: 'spill-policy',
  wire: 'spill_policy',
  values: ['drop', 'queue'],
  default: null,
  help: 'what to do with a spilled request',
  column: 'text',
  check: 'spill',
  example: 'queue',
  exampleInForce: null,
  status: { label: 'spill policy', css: 'spill' },
} as const satisfies ThresholdSpecShape;
const WITH_SPILL = [...THRESHOLD_SPECS, SPILL];

@ThresholdPatchFields(WITH_SPILL)
class PatchWithSpill {}

@ThresholdValueFields(WITH_SPILL)
class ValuesWithSpill {}

@ThresholdColumns(WITH_SPILL)
class EntityWithSpill {}

@ThresholdPatchFields(WITH_QUEUED)
class PatchWithQueued {}

@ThresholdValueFields(WITH_QUEUED)
class ValuesWithQueued {}

@ThresholdColumns(WITH_QUEUED)
class EntityWithQueued {}

async function validate(body: object, metatype: new () => object = PatchWithQueued) {
  const pipe = new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true });
  const metadata: ArgumentMetadata = { type: 'body', metatype };
  try {
    await pipe.transform(body, metadata);
    return [];
  } catch (err) {
    if (!(err instanceof BadRequestException)) throw err;
    return (err.getResponse() as { message: string[] }).message;
  }
}

const property = (type: new () => object, wire: string) =>
  Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, type.prototype, wire) as object;

describe('a new entry in THRESHOLD_SPECS', () => {
  it('is a field of the change body, validated by its range, cleared by null', async () => {
    expect(await validate({ queued_tokens_threshold: 250 })).toEqual([]);
    expect(await validate({ queued_tokens_threshold: null })).toEqual([]);
    expect(await validate({ queued_tokens_threshold: 0 })).toEqual([
      'queued_tokens_threshold must not be less than 1',
    ]);
    expect(await validate({ queued_tokens_threshold: 1.5 })).toEqual([
      'queued_tokens_threshold must be an integer number',
    ]);
    expect(await validate({ queued_tokens_threshold: 1, queued: 1 })).toEqual([
      'property queued should not exist',
    ]);
  });

  it('is documented in OpenAPI: optional in the body, always present in the answers', () => {
    expect(property(PatchWithQueued, 'queued_tokens_threshold')).toEqual(
      expect.objectContaining({ type: Number, nullable: true, minimum: 1, example: 500 }),
    );
    expect(property(PatchWithQueued, 'queued_tokens_threshold')).toHaveProperty('required', false);
    expect(property(ValuesWithQueued, 'queued_tokens_threshold')).toEqual(
      expect.objectContaining({ type: Number, nullable: true, minimum: 1, example: null }),
    );
    expect(property(ValuesWithQueued, 'queued_tokens_threshold')).not.toHaveProperty(
      'required',
      false,
    );
  });

  it('is a nullable column named like its wire key, with the CHECK of its range', () => {
    const storage = getMetadataArgsStorage();
    const column = storage.columns.find(
      (c) => c.target === EntityWithQueued && c.propertyName === 'queuedTokens',
    );
    expect(column?.options).toMatchObject({
      name: 'queued_tokens_threshold',
      type: 'bigint',
      nullable: true,
    });
    // pg reads int8 as a string; the column hands the busy rule a number.
    expect(column?.options.transformer).toMatchObject({ from: expect.any(Function) });
    const checks = storage.checks.filter((c) => c.target === EntityWithQueued);
    expect(checks).toContainEqual(
      expect.objectContaining({
        name: 'CHK_model_thresholds_queued_tokens',
        expression: '"queued_tokens_threshold" >= 1',
      }),
    );
    expect(checks).toHaveLength(WITH_QUEUED.length);
  });
});

describe('a new word entry (kind enum) in THRESHOLD_SPECS', () => {
  it('is a field of the change body that takes one of its words, cleared by null', async () => {
    for (const value of ['drop', 'queue', null]) {
      expect(await validate({ spill_policy: value }, PatchWithSpill)).toEqual([]);
    }
    for (const value of ['Drop', '', 1, ['drop']]) {
      expect(await validate({ spill_policy: value }, PatchWithSpill)).toEqual([
        'spill_policy must be one of the following values: drop, queue',
      ]);
    }
  });

  it('is documented in OpenAPI with its words', () => {
    expect(property(PatchWithSpill, 'spill_policy')).toEqual(
      expect.objectContaining({ enum: ['drop', 'queue'], nullable: true, example: 'queue' }),
    );
    expect(property(ValuesWithSpill, 'spill_policy')).toEqual(
      expect.objectContaining({ enum: ['drop', 'queue'], nullable: true, example: null }),
    );
  });

  it('is a nullable text column with a CHECK naming its words', () => {
    const storage = getMetadataArgsStorage();
    const column = storage.columns.find(
      (c) => c.target === EntityWithSpill && c.propertyName === 'spillPolicy',
    );
    expect(column?.options).toMatchObject({ name: 'spill_policy', type: 'text', nullable: true });
    expect(column?.options.transformer).toBeUndefined();
    expect(storage.checks.filter((c) => c.target === EntityWithSpill)).toContainEqual(
      expect.objectContaining({
        name: 'CHK_model_thresholds_spill',
        expression: `"spill_policy" IN ('drop', 'queue')`,
      }),
    );
  });
});
