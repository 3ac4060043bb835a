import {
  IsArray,
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidationOptions,
  ArrayNotEmpty,
} from 'class-validator';

/**
 * OpenAI request bodies: only the fields the frontend reads are declared and validated; every
 * other field passes through to the worker untouched.
 */
export class OpenAiBaseRequestDto {
  /** Model name, as listed by GET /v1/models. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  model!: string;

  /** Answer as server-sent events. */
  @IsOptional()
  @IsBoolean()
  stream?: boolean;

  /** Upper bound on generated tokens: an integer in 1 … 2^53-1 (docs/security.md#limits-and-hardening). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  max_tokens?: number;
}

export class ChatCompletionRequestDto extends OpenAiBaseRequestDto {
  /** The conversation so far: objects with a `role` and a `content`. */
  @IsArray()
  @ArrayNotEmpty()
  @IsObject({ each: true })
  messages!: Array<Record<string, unknown>>;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  max_completion_tokens?: number;
}

const PROMPT_INPUT_RULE = 'must be a string, an array of strings, or an array of token ids';

/** A string, an array of strings, an array of token ids, or an array of token-id arrays. */
function IsPromptInput(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPromptInput',
      validator: {
        validate: (value: unknown): boolean => isPromptInput(value),
        defaultMessage: () => `$property ${PROMPT_INPUT_RULE}`,
      },
    },
    options,
  );
}

function isPromptInput(value: unknown): boolean {
  if (typeof value === 'string') return true;
  if (!Array.isArray(value) || value.length === 0) return false;
  return value.every(
    (v) =>
      typeof v === 'string' ||
      Number.isInteger(v) ||
      (Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t))),
  );
}

export class CompletionRequestDto extends OpenAiBaseRequestDto {
  @IsPromptInput()
  prompt!: string | string[] | number[] | number[][];
}

export class EmbeddingRequestDto extends OpenAiBaseRequestDto {
  @IsPromptInput()
  input!: string | string[] | number[] | number[][];
}
