import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { HealthCheckLogger } from './health-check.logger';
import { HealthController } from './health.controller';
import { HealthIndicators } from './health.indicators';

/**
 * Whether this replica serves: `/live`, `/ready`, `/health`, and the drain at shutdown
 * (`graceful-shutdown.ts`), which makes readiness fail before in-flight requests finish.
 */
@Module({
  imports: [
    TerminusModule.forRoot({ errorLogStyle: 'json', logger: HealthCheckLogger }),
    WorkerMonitorModule,
    ThresholdsModule,
  ],
  controllers: [HealthController],
  providers: [HealthIndicators],
  exports: [HealthIndicators],
})
export class HealthModule {}
