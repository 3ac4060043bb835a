import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform } from '@nestjs/common';
import {
  arrayNotEmpty,
  isArray,
  isBoolean,
  isInt,
  isNotEmpty,
  isObject,
  isString,
  max,
  maxLength,
  min,
} from 'class-validator';
import {
  ChatCompletionRequestDto,
  CompletionRequestDto,
  EmbeddingRequestDto,
  isPromptInput,
  PROMPT_INPUT_RULE,
} from './dto/openai-request.dto';

type Body = Record<string, unknown>;
/** Appends the messages of one property's failed rules, as class-validator words them. */
type Rule = (body: Body, errors: string[]) => void;

const model: Rule = (b, errors) => {
  const v = b.model;
  if (!maxLength(v, 256)) errors.push('model must be shorter than or equal to 256 characters');
  if (!isNotEmpty(v)) errors.push('model should not be empty');
  if (!isString(v)) errors.push('model must be a string');
};

const stream: Rule = (b, errors) => {
  const v = b.stream;
  if (v !== undefined && v !== null && !isBoolean(v)) errors.push('stream must be a boolean value');
};

const positiveInt =
  (name: string): Rule =>
  (b, errors) => {
    const v = b[name];
    if (v === undefined || v === null) return;
    if (!max(v, Number.MAX_SAFE_INTEGER)) {
      errors.push(`${name} must not be greater than ${Number.MAX_SAFE_INTEGER}`);
    }
    if (!min(v, 1)) errors.push(`${name} must not be less than 1`);
    if (!isInt(v)) errors.push(`${name} must be an integer number`);
  };

const messages: Rule = (b, errors) => {
  const v = b.messages;
  const each = Array.isArray(v) ? v.every((m) => isObject(m)) : isObject(v);
  if (!each) errors.push('each value in messages must be an object');
  if (!arrayNotEmpty(v)) errors.push('messages should not be empty');
  if (!isArray(v)) errors.push('messages must be an array');
};

const promptInput =
  (name: string): Rule =>
  (b, errors) => {
    if (!isPromptInput(b[name])) errors.push(`${name} ${PROMPT_INPUT_RULE}`);
  };

const BASE = [model, stream, positiveInt('max_tokens')];

/**
 * The rules of each OpenAI request DTO, in the order `ValidationPipe` reports them (the
 * subclass's properties first; within a property, the last decorator first).
 */
const RULES = new Map<unknown, Rule[]>([
  [ChatCompletionRequestDto, [messages, positiveInt('max_completion_tokens'), ...BASE]],
  [CompletionRequestDto, [promptInput('prompt'), ...BASE]],
  [EmbeddingRequestDto, [promptInput('input'), ...BASE]],
]);

/**
 * Validates the OpenAI request bodies with the rules their DTOs declare, giving the same 400
 * (same messages, same order) as `ValidationPipe({ whitelist: false, transform: false })`, and
 * returns the body untouched. Checked by hand because it runs on every proxied request, where
 * class-transformer's copy of the body and class-validator's metadata walk cost more than the
 * few checks themselves; `openai-body.pipe.spec.ts` holds it to ValidationPipe's answers.
 */
@Injectable()
export class OpenAiBodyPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const rules = metadata.type === 'body' ? RULES.get(metadata.metatype) : undefined;
    if (!rules) return value;
    // A body that is not an object (null, an array, a string…) is validated as an empty one.
    const body = isObject(value) ? (value as Body) : {};
    const errors: string[] = [];
    for (const rule of rules) rule(body, errors);
    if (errors.length > 0) throw new BadRequestException(errors);
    return value;
  }
}
