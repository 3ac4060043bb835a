import { Module } from '@nestjs/common';
import { metricProviders } from './metrics.providers';

@Module({
  providers: metricProviders,
  exports: metricProviders,
})
export class MetricsModule {}
