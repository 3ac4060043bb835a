import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { WorkerConfig } from '../config/worker-config';
import { promptSeed, tokenText } from '../engine/deterministic-output';
import { SequenceRequest } from '../engine/sequence';
import { SimEngine } from '../engine/sim-engine';
import { GenerationRequest } from './dto/generation.request';
import { assertServedModel } from './errors/openai-http.error';
import { CompletionFormat, CompletionFormatFactory, usageOf } from './format/completion-format';
import { completeSequence } from './sequence-completion';
import { SseStream } from './sse.stream';

/** Answers chat and text completions, unary or streamed, from the simulated engine. */
@Injectable()
export class GenerationService {
  constructor(
    private readonly engine: SimEngine,
    private readonly config: WorkerConfig,
  ) {}

  async respond(
    request: GenerationRequest,
    formatFor: CompletionFormatFactory,
    reply: FastifyReply,
  ): Promise<void> {
    const { model } = this.config.options;
    assertServedModel(request.model, model);
    // An empty prompt still costs the model one step of prefill (its BOS token).
    const job = { promptTokens: Math.max(1, request.promptTokens), maxTokens: request.maxTokens };
    // Fail before a stream opens: afterwards the status line can no longer change.
    this.engine.assertAccepts(job);
    const format = formatFor(model, request.includeUsage);
    if (request.stream) this.stream(request, job, format, reply);
    else await this.unary(request, job, format, reply);
  }

  private async unary(
    request: GenerationRequest,
    job: SequenceRequest,
    format: CompletionFormat,
    reply: FastifyReply,
  ): Promise<void> {
    const seed = promptSeed(request.promptText);
    const pieces: string[] = [];
    const onToken = (index: number): void => void pieces.push(tokenText(seed, index));
    const finished = await completeSequence(this.engine, job, reply.raw, onToken);
    if (!finished) return;
    const usage = usageOf(request.promptTokens, pieces.length);
    await reply.code(200).send(format.response(pieces.join(''), request.finishReason, usage));
  }

  private stream(
    request: GenerationRequest,
    job: SequenceRequest,
    format: CompletionFormat,
    reply: FastifyReply,
  ): void {
    const seed = promptSeed(request.promptText);
    const sse = SseStream.open(reply);
    const sequence = this.engine.submit(job, {
      onToken: (index) => sse.send(format.tokenChunk(tokenText(seed, index), index)),
      onFinish: () => {
        sse.send(format.finishChunk(request.finishReason));
        if (request.includeUsage)
          sse.send(format.usageChunk(usageOf(request.promptTokens, job.maxTokens)));
        sse.end();
      },
      onAbort: () => sse.abort(),
    });
    sse.onClose(() => sequence.cancel());
  }
}
