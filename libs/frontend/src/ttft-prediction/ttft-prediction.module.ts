import { Module } from '@nestjs/common';
import { WorkerMonitorModule } from '../worker-monitor/worker-monitor.module';
import { TtftPredictor } from './ttft-predictor.service';

/** Predicted time to first token per worker, learned from the answers the proxy relays. */
@Module({
  imports: [WorkerMonitorModule],
  providers: [TtftPredictor],
  exports: [TtftPredictor],
})
export class TtftPredictionModule {}
