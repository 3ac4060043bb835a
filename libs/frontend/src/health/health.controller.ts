import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { HealthIndicators } from './health.indicators';

/** Liveness and readiness probes. */
@ApiTags('operations')
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicators,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: 200 while the process runs' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * For load balancers and Kubernetes readiness: ready while this replica can serve — not
   * draining, thresholds loaded once — even through a database or NATS outage, when admission
   * goes on with the last loaded thresholds and the last known load. Taking every replica out of
   * its Service because their shared database is down would stop the fleet for nothing.
   */
  @Get('ready')
  @HealthCheck()
  @ApiOperation({
    summary: 'Readiness: serving (not draining, thresholds loaded once), whatever the dependencies',
  })
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.indicators.serving(),
      () => this.indicators.thresholdsLoaded(),
    ]);
  }

  /** Dependency status: the bus and the threshold database answer and no shutdown is under way. */
  @Get('health')
  @HealthCheck()
  @ApiOperation({ summary: 'Dependencies: bus and threshold database reachable, not draining' })
  dependencies(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.indicators.serving(),
      () => this.indicators.busHealth(),
      () => this.indicators.databaseHealth(),
    ]);
  }
}
