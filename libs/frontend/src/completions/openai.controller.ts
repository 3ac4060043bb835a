import { Body, Controller, Get, HttpCode, Post, Res, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AdmissionGuard } from '../admission/admission.guard';
import { ProxyService } from './proxy.service';
import {
  ChatCompletionRequestDto,
  CompletionRequestDto,
  EmbeddingRequestDto,
} from './dto/openai-request.dto';
import { ModelListDto, ModelsService } from './models.service';
import { OpenAiBodyPipe } from './openai-body.pipe';

/** Validates the fields we read and lets the rest of an OpenAI body pass through unchanged. */
@Controller('v1')
@UsePipes(new OpenAiBodyPipe())
export class OpenAiController {
  constructor(
    private readonly proxy: ProxyService,
    private readonly models: ModelsService,
  ) {}

  @Get('models')
  list(): ModelListDto {
    return this.models.list();
  }

  @Post('chat/completions')
  @HttpCode(200)
  @UseGuards(AdmissionGuard)
  chat(@Body() body: ChatCompletionRequestDto, @Res() reply: FastifyReply): Promise<void> {
    return this.proxy.forward('chat_completions', '/v1/chat/completions', body, reply);
  }

  @Post('completions')
  @HttpCode(200)
  @UseGuards(AdmissionGuard)
  complete(@Body() body: CompletionRequestDto, @Res() reply: FastifyReply): Promise<void> {
    return this.proxy.forward('completions', '/v1/completions', body, reply);
  }

  @Post('embeddings')
  @HttpCode(200)
  @UseGuards(AdmissionGuard)
  embed(@Body() body: EmbeddingRequestDto, @Res() reply: FastifyReply): Promise<void> {
    return this.proxy.forward('embeddings', '/v1/embeddings', body, reply);
  }
}
