import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { WorkerConfig } from '../config/worker-config';
import { embeddingVector } from '../engine/deterministic-output';
import { SimEngine } from '../engine/sim-engine';
import { completeSequence } from './sequence-completion';
import { EmbeddingRequest } from './dto/embedding.request';
import { assertServedModel } from './errors/openai-http.error';

export interface EmbeddingResponse {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** Embeddings cost a prefill of all inputs and no decode step. */
@Injectable()
export class EmbeddingService {
  constructor(
    private readonly engine: SimEngine,
    private readonly config: WorkerConfig,
  ) {}

  /** Null when the client disconnected before the prefill finished. */
  async embed(
    request: EmbeddingRequest,
    response: ServerResponse,
  ): Promise<EmbeddingResponse | null> {
    const { model } = this.config.options;
    assertServedModel(request.model, model);
    const job = { promptTokens: Math.max(1, request.promptTokens), maxTokens: 0 };
    if (!(await completeSequence(this.engine, job, response))) return null;
    return {
      object: 'list',
      data: request.inputs.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: encode(embeddingVector(text, request.dimensions), request.encodingFormat),
      })),
      model,
      usage: { prompt_tokens: request.promptTokens, total_tokens: request.promptTokens },
    };
  }
}

/** base64 is the little-endian float32 array, as OpenAI sends it. */
function encode(vector: number[], format: 'float' | 'base64'): number[] | string {
  if (format === 'float') return vector;
  return Buffer.from(Float32Array.from(vector).buffer).toString('base64');
}
