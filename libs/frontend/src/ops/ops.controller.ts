import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { HealthIndicators } from './health.indicators';

/** Liveness and readiness probes. */
@ApiTags('operations')
@Controller()
export class OpsController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicators,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: 200 while the process runs' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready when the bus and the threshold database answer and no shutdown is under way. */
  @Get('health')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: bus and threshold database reachable, not draining' })
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.indicators.serving(),
      () => this.indicators.busHealth(),
      () => this.indicators.databaseHealth(),
    ]);
  }
}
