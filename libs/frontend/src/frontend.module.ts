import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { InProcessBus } from '@sluice/bus';
import { AdmissionPolicy } from './admission/admission-policy';
import { AdmissionModule } from './admission/admission.module';
import { OpenAiExceptionFilter } from './admission/openai-exception.filter';
import { ServiceOverloadedFilter } from './admission/service-overloaded.filter';
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
import { ThresholdAdminModule } from './threshold-admin/threshold-admin.module';
import { ThresholdsModule } from './thresholds/thresholds.module';
import { EmbeddedBusModule } from './transport/transport.module';

/** The whole frontend: OpenAI API, admission, router, worker monitor, metrics. */
@Module({})
export class FrontendModule {
  static forRoot(
    config: FrontendConfig,
    policies: Type<AdmissionPolicy>[] = [],
    embeddedBus?: InProcessBus,
  ): DynamicModule {
    return {
      module: FrontendModule,
      imports: [
        FrontendConfigModule.forRoot(config),
        EmbeddedBusModule.forRoot(embeddedBus),
        MetricsModule,
        RequestMetricsModule,
        MonitorModule,
        RouterModule,
        AdmissionModule.forRoot(config, policies),
        OpenAiModule,
        ThresholdsModule,
        ThresholdAdminModule,
        OpsModule,
        StatusModule,
        EngineBridgeModule,
      ],
      // Nest tries global filters last registered first: the 503 filter goes after the catch-all.
      providers: [
        OpenAiExceptionFilter,
        { provide: APP_FILTER, useExisting: OpenAiExceptionFilter },
        { provide: APP_FILTER, useExisting: ServiceOverloadedFilter },
      ],
    };
  }
}
