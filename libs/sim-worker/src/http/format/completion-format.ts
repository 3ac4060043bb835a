import { randomUUID } from 'node:crypto';
import { FinishReason } from '../dto/generation.request';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Shapes one response (unary or streamed) of one OpenAI endpoint; ids are fixed per response. */
export interface CompletionFormat {
  tokenChunk(text: string, index: number): object;
  finishChunk(reason: FinishReason): object;
  usageChunk(usage: Usage): object;
  response(text: string, reason: FinishReason, usage: Usage): object;
}

export type CompletionFormatFactory = (model: string, includeUsage: boolean) => CompletionFormat;

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

export function responseId(prefix: 'chatcmpl' | 'cmpl'): string {
  return `${prefix}-${randomUUID().replaceAll('-', '')}`;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
