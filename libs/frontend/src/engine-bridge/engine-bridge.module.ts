import { Module } from '@nestjs/common';
import { TransportModule } from '../transport/transport.module';
import { InProcessBridge } from './in-process-bridge.service';

/** The in-process engine bridge (`--engine-target`), fed the frontend's bus at start. */
@Module({
  imports: [TransportModule],
  providers: [InProcessBridge],
  exports: [InProcessBridge],
})
export class EngineBridgeModule {}
