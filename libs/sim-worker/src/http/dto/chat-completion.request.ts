import { estimatePromptTokens } from '@sluice/contracts';
import { InvalidRequestError } from '../errors/openai-http.error';
import { GenerationRequest } from './generation.request';
import {
  assertSingleChoice,
  optionalModel,
  optionalPositiveInteger,
  requestBody,
  streamFlags,
} from './request-fields';

/** What a model would write when the client sets no limit. */
export const DEFAULT_CHAT_MAX_TOKENS = 64;

export function parseChatCompletionRequest(raw: unknown): GenerationRequest {
  const body = requestBody(raw);
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new InvalidRequestError("'messages' must be a non-empty array");
  }
  messages.forEach(assertMessage);
  assertSingleChoice(body);
  const limit =
    optionalPositiveInteger(body, 'max_completion_tokens') ??
    optionalPositiveInteger(body, 'max_tokens');
  return {
    model: optionalModel(body),
    promptText: JSON.stringify(messages),
    promptTokens: estimatePromptTokens(body),
    maxTokens: limit ?? DEFAULT_CHAT_MAX_TOKENS,
    finishReason: limit === undefined ? 'stop' : 'length',
    ...streamFlags(body),
  };
}

function assertMessage(message: unknown, index: number): void {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw new InvalidRequestError(`'messages[${index}]' must be an object`);
  }
  const { role, content } = message as { role?: unknown; content?: unknown };
  if (typeof role !== 'string' || role === '') {
    throw new InvalidRequestError(`'messages[${index}].role' must be a non-empty string`);
  }
  // Assistant messages with tool calls carry null content; parts arrays are multimodal input.
  if (content != null && typeof content !== 'string' && !Array.isArray(content)) {
    throw new InvalidRequestError(`'messages[${index}].content' must be a string or an array`);
  }
}
