import { DynamicModule } from '@nestjs/common';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { MetricsController } from './metrics.controller';

/**
 * Serves `GET /metrics`: what every floor declared in prom-client's registry (with the default
 * process metrics), then the per-worker gauges the monitor writes apart. On the top floor, as
 * it reads from the monitor. The async form is the one whose controller can inject from other
 * modules (the plain form hosts it in a module importing none).
 */
export function metricsEndpoint(): DynamicModule {
  const options = { path: '/metrics', defaultMetrics: { enabled: true } };
  return PrometheusModule.registerAsync({
    imports: [WorkerMonitorModule],
    controller: MetricsController,
    // The package sets the route path on the controller named here.
    useFactory: () => ({ ...options, controller: MetricsController }),
  });
}
