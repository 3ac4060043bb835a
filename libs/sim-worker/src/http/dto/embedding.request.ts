import { estimatePromptTokens } from '@sluice/contracts';
import { InvalidRequestError } from '../errors/openai-http.error';
import {
  isTextOrTokens,
  optionalModel,
  optionalPositiveInteger,
  requestBody,
} from './request-fields';

export const DEFAULT_EMBEDDING_DIMENSIONS = 32;
const MAX_EMBEDDING_DIMENSIONS = 4096;

export interface EmbeddingRequest {
  readonly model: string | undefined;
  /** One text per embedding to return (token-id inputs are rendered as text). */
  readonly inputs: readonly string[];
  readonly promptTokens: number;
  /** The official clients ask for base64 by default. */
  readonly encodingFormat: 'float' | 'base64';
  readonly dimensions: number;
}

export function parseEmbeddingRequest(raw: unknown): EmbeddingRequest {
  const body = requestBody(raw);
  const input = body.input;
  if (!isTextOrTokens(input)) {
    throw new InvalidRequestError(
      "'input' must be a string, an array of strings, or an array of token ids",
    );
  }
  const dimensions = optionalPositiveInteger(body, 'dimensions') ?? DEFAULT_EMBEDDING_DIMENSIONS;
  if (dimensions > MAX_EMBEDDING_DIMENSIONS) {
    throw new InvalidRequestError(`'dimensions' must be at most ${MAX_EMBEDDING_DIMENSIONS}`);
  }
  return {
    model: optionalModel(body),
    inputs: splitInputs(input as string | unknown[]),
    promptTokens: estimatePromptTokens(body),
    encodingFormat: encodingFormat(body.encoding_format),
    dimensions,
  };
}

function splitInputs(input: string | unknown[]): string[] {
  if (typeof input === 'string') return [input];
  // A flat array of token ids is one input; otherwise each element is one.
  if (input.every((item) => typeof item === 'number')) return [JSON.stringify(input)];
  return input.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
}

function encodingFormat(value: unknown): 'float' | 'base64' {
  if (value === undefined || value === null || value === 'float') return 'float';
  if (value === 'base64') return 'base64';
  throw new InvalidRequestError("'encoding_format' must be 'float' or 'base64'");
}
