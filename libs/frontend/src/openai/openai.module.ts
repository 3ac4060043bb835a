import { Module } from '@nestjs/common';
import { MonitorModule } from '../monitor/monitor.module';
import { RouterModule } from '../router/router.module';
import { ModelsService } from './models.service';
import { OpenAiController } from './openai.controller';

/** The OpenAI endpoints, guarded by admission control (the global `AdmissionModule`). */
@Module({
  imports: [MonitorModule, RouterModule],
  controllers: [OpenAiController],
  providers: [ModelsService],
})
export class OpenAiModule {}
