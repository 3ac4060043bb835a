import { DynamicModule, Module, Type } from '@nestjs/common';
import { AdmissionDecision } from '../admission/admission-decision.service';
import { AdmissionGuard } from '../admission/admission.guard';
import { AdmissionPolicies, AdmissionPolicy } from '../admission/admission-policy';
import { InflightPerKeyPolicy } from '../admission/policies/inflight-per-key.policy';
import { FrontendConfig } from '../config/frontend-config';
import { MonitorModule } from '../monitor/monitor.module';
import { OpsModule } from '../ops/ops.module';
import { RequestMetricsModule } from '../request-metrics/request-metrics.module';
import { RouterModule } from '../router/router.module';
import { ModelsService } from './models.service';
import { OpenAiController } from './openai.controller';

/** The OpenAI endpoints, guarded by admission control and the configured policies. */
@Module({})
export class OpenAiModule {
  static forRoot(config: FrontendConfig, userPolicies: Type<AdmissionPolicy>[]): DynamicModule {
    const policies: Type<AdmissionPolicy>[] = [
      ...(config.maxInflightPerKey !== null ? [InflightPerKeyPolicy] : []),
      ...userPolicies,
    ];
    return {
      module: OpenAiModule,
      imports: [MonitorModule, RouterModule, OpsModule, RequestMetricsModule],
      controllers: [OpenAiController],
      providers: [
        ModelsService,
        AdmissionDecision,
        AdmissionGuard,
        ...policies,
        {
          provide: AdmissionPolicies,
          inject: policies,
          useFactory: (...instances: AdmissionPolicy[]) => new AdmissionPolicies(instances),
        },
      ],
    };
  }
}
