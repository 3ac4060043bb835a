import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { InProcessBus } from '@sluice/bus';
import { AdmissionPolicy } from './admission/admission-policy';
import { AdmissionModule } from './admission/admission.module';
import { ServiceOverloadedFilter } from './admission/service-overloaded.filter';
import { CompletionsModule } from './completions/completions.module';
import { FrontendConfig } from './config/frontend-config';
import { FrontendConfigModule } from './config/frontend-config.module';
import { EngineBridgeModule } from './engine-bridge/engine-bridge.module';
import { HealthModule } from './health/health.module';
import { HttpModule } from './http/http.module';
import { metricsEndpoint } from './metrics-endpoint/metrics-endpoint.module';
import { OpenAiExceptionFilter } from './http/openai-exception.filter';
import { StatusModule } from './status/status.module';
import { TenantAdminModule } from './tenant-admin/tenant-admin.module';
import { ThresholdAdminModule } from './threshold-admin/threshold-admin.module';
import { EmbeddedBusModule } from './transport/transport.module';

/**
 * The whole frontend. Each folder is one module that depends only on the folders below it
 * (docs/architecture.md; the lint rule checks it); this module puts the top floor together
 * with the values given at start.
 */
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
        AdmissionModule.forRoot(config, policies),
        CompletionsModule,
        ThresholdAdminModule,
        TenantAdminModule,
        StatusModule,
        HealthModule,
        HttpModule,
        metricsEndpoint(),
        EngineBridgeModule,
      ],
      // Nest tries global filters last registered first: the 503 filter goes after the catch-all.
      providers: [
        { provide: APP_FILTER, useExisting: OpenAiExceptionFilter },
        { provide: APP_FILTER, useExisting: ServiceOverloadedFilter },
      ],
    };
  }
}
