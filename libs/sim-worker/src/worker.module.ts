import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { EventPublisher } from '@sluice/bus';
import { WorkerConfig } from './config/worker-config';
import { WorkerOptions } from './config/worker-options';
import { SimEngine } from './engine/sim-engine';
import { engineFormat } from './engine-formats/engine-format.controllers';
import { EngineStateReader } from './engine-formats/engine-state.reader';
import { EmbeddingService } from './http/embedding.service';
import { EmbeddingsController } from './http/embeddings.controller';
import { OpenAiErrorFilter } from './http/errors/openai-error.filter';
import { GenerationService } from './http/generation.service';
import { ModelsController } from './http/models.controller';
import { SimControlController } from './http/sim-control.controller';
import { TextGenerationController } from './http/text-generation.controller';
import { KvMetricsReporter } from './reporting/kv-metrics.reporter';
import { WorkerLifecycle } from './worker-lifecycle.service';

/**
 * One simulated worker: OpenAI-compatible HTTP API, engine, load reporter and, with
 * `--metrics-format`, a real engine's load endpoints.
 */
@Module({})
export class WorkerModule {
  static register(options: WorkerOptions, publisher: EventPublisher): DynamicModule {
    const format = engineFormat(options.metricsFormat);
    return {
      module: WorkerModule,
      controllers: [
        TextGenerationController,
        EmbeddingsController,
        ModelsController,
        SimControlController,
        ...format.controllers,
      ],
      providers: [
        { provide: WorkerConfig, useValue: new WorkerConfig(options) },
        { provide: EventPublisher, useValue: publisher },
        { provide: SimEngine, useValue: new SimEngine(options) },
        { provide: APP_FILTER, useClass: OpenAiErrorFilter },
        GenerationService,
        EmbeddingService,
        EngineStateReader,
        KvMetricsReporter,
        WorkerLifecycle,
        ...format.providers,
      ],
    };
  }
}
