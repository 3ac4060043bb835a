import { DynamicModule, Module } from '@nestjs/common';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { MonitorModule } from '../monitor/monitor.module';
import { MetricsController } from './metrics.controller';
import { WorkerGaugesRenderer } from './worker-gauges.renderer';

/** The per-worker gauges, read from the monitor's registry when `/metrics` is scraped. */
@Module({
  imports: [MonitorModule],
  providers: [WorkerGaugesRenderer],
  exports: [WorkerGaugesRenderer],
})
export class WorkerGaugesModule {}

/**
 * Serves `GET /metrics` with default process metrics. The async form is the one whose
 * controller can inject from other modules (the plain form hosts it in a module importing none).
 */
export function metricsEndpoint(): DynamicModule {
  const options = { path: '/metrics', defaultMetrics: { enabled: true } };
  return PrometheusModule.registerAsync({
    imports: [WorkerGaugesModule],
    controller: MetricsController,
    // The package sets the route path on the controller named here.
    useFactory: () => ({ ...options, controller: MetricsController }),
  });
}
