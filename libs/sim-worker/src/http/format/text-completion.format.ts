import { FinishReason } from '../dto/generation.request';
import { CompletionFormatFactory, responseId, unixSeconds } from './completion-format';

/** Legacy `text_completion` objects; streamed chunks carry the same object type. */
export const textCompletionFormat: CompletionFormatFactory = (model, includeUsage) => {
  const id = responseId('cmpl');
  const created = unixSeconds();
  const usageField = includeUsage ? { usage: null } : {};
  const envelope = { id, object: 'text_completion', created, model };
  const choice = (text: string, finishReason: FinishReason | null) => ({
    index: 0,
    text,
    logprobs: null,
    finish_reason: finishReason,
  });
  return {
    tokenChunk: (text) => ({ ...envelope, choices: [choice(text, null)], ...usageField }),
    finishChunk: (reason) => ({ ...envelope, choices: [choice('', reason)], ...usageField }),
    usageChunk: (usage) => ({ ...envelope, choices: [], usage }),
    response: (text, reason, usage) => ({ ...envelope, choices: [choice(text, reason)], usage }),
  };
};
