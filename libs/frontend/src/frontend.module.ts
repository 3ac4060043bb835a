import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { OpenAiExceptionFilter } from './admission/openai-exception.filter';
import { FrontendConfig } from './config/frontend-config';
import { FrontendConfigModule } from './config/frontend-config.module';
import { MonitorModule } from './monitor/monitor.module';
import { OpenAiModule } from './openai/openai.module';
import { OpsController } from './ops/ops.controller';
import { RouterModule } from './router/router.module';
import { ThresholdsModule } from './thresholds/thresholds.module';

/** The whole frontend: OpenAI API, admission, router, worker monitor, metrics. */
@Module({})
export class FrontendModule {
  static forRoot(config: FrontendConfig): DynamicModule {
    return {
      module: FrontendModule,
      imports: [
        FrontendConfigModule.forRoot(config),
        PrometheusModule.register({ path: '/metrics', defaultMetrics: { enabled: true } }),
        MonitorModule,
        RouterModule,
        OpenAiModule,
        ThresholdsModule,
      ],
      controllers: [OpsController],
      providers: [{ provide: APP_FILTER, useClass: OpenAiExceptionFilter }],
    };
  }
}
