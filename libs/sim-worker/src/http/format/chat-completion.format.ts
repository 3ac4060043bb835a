import { FinishReason } from '../dto/generation.request';
import { CompletionFormatFactory, responseId, unixSeconds } from './completion-format';

interface ChatDelta {
  role?: 'assistant';
  content?: string;
}

/** `chat.completion` and `chat.completion.chunk` objects, as OpenAI's API returns them. */
export const chatCompletionFormat: CompletionFormatFactory = (model, includeUsage) => {
  const id = responseId('chatcmpl');
  const created = unixSeconds();
  const chunkEnvelope = { id, object: 'chat.completion.chunk', created, model };
  // With include_usage, OpenAI sets usage to null on every chunk but the last.
  const usageField = includeUsage ? { usage: null } : {};
  const chunk = (delta: ChatDelta, finishReason: FinishReason | null): object => ({
    ...chunkEnvelope,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...usageField,
  });
  return {
    tokenChunk: (text, index) =>
      chunk(index === 0 ? { role: 'assistant', content: text } : { content: text }, null),
    finishChunk: (reason) => chunk({}, reason),
    usageChunk: (usage) => ({ ...chunkEnvelope, choices: [], usage }),
    response: (text, reason, usage) => ({
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text },
          logprobs: null,
          finish_reason: reason,
        },
      ],
      usage,
    }),
  };
};
