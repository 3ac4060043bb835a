import { Module } from '@nestjs/common';
import { InProcessBridge } from './in-process-bridge.service';

/** The in-process engine bridge (`--engine-target`), fed the frontend's bus at start. */
@Module({
  providers: [InProcessBridge],
  exports: [InProcessBridge],
})
export class EngineBridgeModule {}
