import { Module } from '@nestjs/common';
import { AdmissionGuard } from '../admission/admission.guard';
import { MonitorModule } from '../monitor/monitor.module';
import { RouterModule } from '../router/router.module';
import { ModelsService } from './models.service';
import { OpenAiController } from './openai.controller';

@Module({
  imports: [MonitorModule, RouterModule],
  controllers: [OpenAiController],
  providers: [ModelsService, AdmissionGuard],
})
export class OpenAiModule {}
