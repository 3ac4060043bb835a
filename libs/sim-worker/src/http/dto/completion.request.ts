import { estimatePromptTokens } from '@sluice/contracts';
import { InvalidRequestError } from '../errors/openai-http.error';
import { GenerationRequest } from './generation.request';
import {
  assertSingleChoice,
  isTextOrTokens,
  optionalModel,
  optionalPositiveInteger,
  requestBody,
  streamFlags,
} from './request-fields';

/** OpenAI's default for the legacy completions endpoint. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;

export function parseCompletionRequest(raw: unknown): GenerationRequest {
  const body = requestBody(raw);
  const prompt = body.prompt;
  if (!isTextOrTokens(prompt)) {
    throw new InvalidRequestError(
      "'prompt' must be a string, an array of strings, or an array of token ids",
    );
  }
  assertSingleChoice(body);
  const limit = optionalPositiveInteger(body, 'max_tokens');
  return {
    model: optionalModel(body),
    promptText: typeof prompt === 'string' ? prompt : JSON.stringify(prompt),
    promptTokens: estimatePromptTokens(body),
    maxTokens: limit ?? DEFAULT_COMPLETION_MAX_TOKENS,
    finishReason: limit === undefined ? 'stop' : 'length',
    ...streamFlags(body),
  };
}
