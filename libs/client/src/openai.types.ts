/**
 * The OpenAI request and response shapes this client sends and reads, reduced to the common
 * fields; anything else is passed through untouched (the index signatures).
 */
export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | (string & {});
  content: string | null | unknown[];
  [field: string]: unknown;
}

/** A message as the server answers it: its content is text (or null, e.g. for tool calls). */
export interface ChatCompletionMessage {
  role: string;
  content: string | null;
  [field: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number;
  temperature?: number;
  stream?: false;
  [field: string]: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{ index: number; message: ChatCompletionMessage; finish_reason: string | null }>;
  usage?: Usage;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: Partial<ChatCompletionMessage>;
    finish_reason: string | null;
  }>;
  usage?: Usage | null;
}

export interface CompletionRequest {
  model: string;
  prompt: string | string[] | number[] | number[][];
  max_tokens?: number;
  temperature?: number;
  stream?: false;
  [field: string]: unknown;
}

export interface Completion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: Array<{ index: number; text: string; finish_reason: string | null }>;
  usage?: Usage | null;
}

/** Streamed completions use the same shape as the unary answer, one piece of text each. */
export type CompletionChunk = Completion;

export type StreamRequest<R> = Omit<R, 'stream'>;

export interface EmbeddingRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  [field: string]: unknown;
}

export interface EmbeddingList {
  object: 'list';
  model: string;
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  usage?: { prompt_tokens: number; total_tokens: number };
}

export interface Model {
  id: string;
  object: 'model';
  created?: number;
  owned_by?: string;
}

export interface ModelList {
  object: 'list';
  data: Model[];
}
