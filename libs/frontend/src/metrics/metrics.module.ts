import { Module } from '@nestjs/common';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { metricProviders } from './metrics.providers';

/**
 * The metrics every floor writes, declared once, and `GET /metrics` that shows them. Metrics
 * read from one module's state at scrape time are declared by that module instead.
 */
@Module({
  imports: [PrometheusModule.register({ path: '/metrics', defaultMetrics: { enabled: true } })],
  providers: metricProviders,
  exports: metricProviders,
})
export class MetricsModule {}
