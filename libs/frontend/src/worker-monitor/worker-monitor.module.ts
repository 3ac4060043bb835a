import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { ThresholdsModule } from '../thresholds/thresholds.module';
import { TransportModule } from '../transport/transport.module';
import { BusStateService } from './bus-state.service';
import { BusySpells } from './busy-spells';
import { BusyTransitionsCounter } from './busy-transitions.counter';
import { KvMetricsController } from './kv-metrics.controller';
import { MonitorService } from './monitor.service';
import { OutlierEjection } from './outlier-ejection';
import { PeerReservationsService } from './peer-reservations.service';
import { ReservationShareController } from './reservation-share.controller';
import { ReservationShareService } from './reservation-share.service';
import { WorkerGaugesRenderer } from './worker-gauges.renderer';
import { workerMetricProviders } from './worker-metrics.providers';
import { WorkerRegistry } from './worker-registry.service';

/** The worker monitor: load reports in, per-model busy state out. */
@Module({
  imports: [MetricsModule, ThresholdsModule, TransportModule],
  controllers: [KvMetricsController, ReservationShareController],
  providers: [
    WorkerRegistry,
    MonitorService,
    BusStateService,
    WorkerGaugesRenderer,
    BusyTransitionsCounter,
    BusySpells,
    OutlierEjection,
    PeerReservationsService,
    ReservationShareService,
    ...workerMetricProviders,
  ],
  exports: [
    WorkerRegistry,
    MonitorService,
    BusStateService,
    WorkerGaugesRenderer,
    BusySpells,
    OutlierEjection,
  ],
})
export class WorkerMonitorModule {}
