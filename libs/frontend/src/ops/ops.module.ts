import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { MonitorModule } from '../monitor/monitor.module';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { HealthCheckLogger } from './health-check.logger';
import { HealthIndicators } from './health.indicators';
import { OpsController } from './ops.controller';

@Module({
  imports: [
    TerminusModule.forRoot({ errorLogStyle: 'json', logger: HealthCheckLogger }),
    MonitorModule,
    ThresholdsModule,
  ],
  controllers: [OpsController],
  providers: [HealthIndicators],
})
export class OpsModule {}
