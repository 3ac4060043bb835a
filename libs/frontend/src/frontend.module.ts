import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AdmissionPolicy } from './admission/admission-policy';
import { OpenAiExceptionFilter } from './admission/openai-exception.filter';
import { FrontendConfig } from './config/frontend-config';
import { FrontendConfigModule } from './config/frontend-config.module';
import { EngineBridgeModule } from './engine-bridge/engine-bridge.module';
import { MetricsModule } from './metrics/metrics.module';
import { MonitorModule } from './monitor/monitor.module';
import { OpenAiModule } from './openai/openai.module';
import { OpsModule } from './ops/ops.module';
import { RequestMetricsModule } from './request-metrics/request-metrics.module';
import { RouterModule } from './router/router.module';
import { StatusModule } from './status/status.module';
import { ThresholdsModule } from './thresholds/thresholds.module';

/** The whole frontend: OpenAI API, admission, router, worker monitor, metrics. */
@Module({})
export class FrontendModule {
  static forRoot(config: FrontendConfig, policies: Type<AdmissionPolicy>[] = []): DynamicModule {
    return {
      module: FrontendModule,
      imports: [
        FrontendConfigModule.forRoot(config),
        MetricsModule,
        RequestMetricsModule,
        MonitorModule,
        RouterModule,
        OpenAiModule.forRoot(config, policies),
        ThresholdsModule,
        OpsModule,
        StatusModule,
        EngineBridgeModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: OpenAiExceptionFilter }],
    };
  }
}
