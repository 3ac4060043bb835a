import { Module } from '@nestjs/common';
import { RequestMetricsModule } from '../request-metrics/request-metrics.module';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { TtftPredictionModule } from '../ttft-prediction/ttft-prediction.module';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { ModelsService } from './models.service';
import { OpenAiController } from './openai.controller';
import { ProxyService } from './proxy.service';
import { RouterService } from './routing/router.service';
import { ObjectiveGate } from './routing/objective-gate';
import { WorkerChoice } from './routing/worker-choice';
import { WorkerTraffic } from './routing/worker-traffic';
import { UpstreamClient } from './upstream/upstream.client';

/**
 * The OpenAI endpoints behind admission: body checks, the router that picks a free worker (and
 * its queue), the proxy that relays the worker's answer, and the upstream pool. The admission
 * guard on the routes comes from the global `AdmissionModule`.
 */
@Module({
  imports: [ThresholdsModule, WorkerMonitorModule, RequestMetricsModule, TtftPredictionModule],
  controllers: [OpenAiController],
  providers: [
    ModelsService,
    WorkerTraffic,
    WorkerChoice,
    ObjectiveGate,
    RouterService,
    UpstreamClient,
    ProxyService,
  ],
  exports: [ModelsService, WorkerTraffic, RouterService, UpstreamClient, ProxyService],
})
export class CompletionsModule {}
