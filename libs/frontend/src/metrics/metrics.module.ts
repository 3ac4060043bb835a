import { Module } from '@nestjs/common';
import { metricProviders } from './metrics.providers';

/**
 * The metrics every floor writes, declared once. Metrics read from one module's state at scrape
 * time are declared by that module instead; `GET /metrics` is served from the top floor
 * (metrics-endpoint/), which can read every floor.
 */
@Module({
  providers: metricProviders,
  exports: metricProviders,
})
export class MetricsModule {}
