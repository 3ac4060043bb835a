import { DynamicModule, Module, Type } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { RequestMetricsModule } from '../request-metrics/request-metrics.module';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { TenantsModule } from '../tenants/tenants.module';
import { AdmissionDecision } from './admission-decision.service';
import { AdmissionGuard } from './admission.guard';
import { AdmissionPolicies, AdmissionPolicy } from './admission-policy';
import { BusyModels } from './busy-models';
import { CriticalWait } from './critical-wait';
import { LifecycleService } from './lifecycle.service';
import { RetryAfter } from './retry-after';
import { TenantShares } from './tenant-shares';
import { InflightPerKeyPolicy } from './policies/inflight-per-key.policy';
import { PriorityByKeyPolicy } from './policies/priority-by-key.policy';
import { ServiceOverloadedFilter } from './service-overloaded.filter';

/**
 * Admission control: the built-in decision (busy workers, draining), the guard that runs it and
 * the configured policies, and the 503 filter. The early refusal hook (`installAdmission`)
 * answers the same decision before Nest's pipeline.
 *
 * Configured once, at the root, with the policies given to `createFrontendApp`; global so that
 * the guarded routes find the one guard and its policies (like the config module).
 */
@Module({})
export class AdmissionModule {
  static forRoot(config: FrontendConfig, userPolicies: Type<AdmissionPolicy>[]): DynamicModule {
    // The key's class first, so every later policy sees the class the request is served as.
    const policies: Type<AdmissionPolicy>[] = [
      ...(config.priorityKeys !== null ? [PriorityByKeyPolicy] : []),
      ...(config.maxInflightPerKey !== null ? [InflightPerKeyPolicy] : []),
      ...userPolicies,
    ];
    return {
      module: AdmissionModule,
      global: true,
      imports: [ThresholdsModule, WorkerMonitorModule, RequestMetricsModule, TenantsModule],
      providers: [
        LifecycleService,
        AdmissionDecision,
        BusyModels,
        CriticalWait,
        TenantShares,
        RetryAfter,
        AdmissionGuard,
        ServiceOverloadedFilter,
        ...policies,
        {
          provide: AdmissionPolicies,
          inject: policies,
          useFactory: (...instances: AdmissionPolicy[]) => new AdmissionPolicies(instances),
        },
      ],
      exports: [
        LifecycleService,
        AdmissionDecision,
        BusyModels,
        CriticalWait,
        TenantShares,
        RetryAfter,
        AdmissionPolicies,
        AdmissionGuard,
        ServiceOverloadedFilter,
        // The guard runs in the routes' modules: they need the tenants it reads.
        TenantsModule,
      ],
    };
  }
}
