import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { EventPublisher } from '@sluice/bus';
import { WorkerConfig } from './config/worker-config';
import { WorkerOptions } from './config/worker-options';
import { SimEngine } from './engine/sim-engine';
import { EmbeddingService } from './http/embedding.service';
import { EmbeddingsController } from './http/embeddings.controller';
import { OpenAiErrorFilter } from './http/errors/openai-error.filter';
import { GenerationService } from './http/generation.service';
import { ModelsController } from './http/models.controller';
import { TextGenerationController } from './http/text-generation.controller';
import { KvMetricsReporter } from './reporting/kv-metrics.reporter';
import { WorkerLifecycle } from './worker-lifecycle.service';

/** One simulated worker: OpenAI-compatible HTTP API, engine and load reporter. */
@Module({})
export class WorkerModule {
  static register(options: WorkerOptions, publisher: EventPublisher): DynamicModule {
    return {
      module: WorkerModule,
      controllers: [TextGenerationController, EmbeddingsController, ModelsController],
      providers: [
        { provide: WorkerConfig, useValue: new WorkerConfig(options) },
        { provide: EventPublisher, useValue: publisher },
        { provide: SimEngine, useValue: new SimEngine(options) },
        { provide: APP_FILTER, useClass: OpenAiErrorFilter },
        GenerationService,
        EmbeddingService,
        KvMetricsReporter,
        WorkerLifecycle,
      ],
    };
  }
}
