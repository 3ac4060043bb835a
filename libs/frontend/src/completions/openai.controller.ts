import { Body, Controller, Get, HttpCode, Post, Res, UseGuards, UsePipes } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdmissionGuard } from '../admission/admission.guard';
import { DEFAULT_PRIORITY_HEADER, PRIORITY_CLASSES } from '../config/priority';
import { ProxyService } from './proxy.service';
import {
  ChatCompletionRequestDto,
  CompletionRequestDto,
  EmbeddingRequestDto,
} from './dto/openai-request.dto';
import { ModelListDto, ModelsService } from './models.service';
import { OpenAiBodyPipe } from './openai-body.pipe';

/**
 * The priority header on the OpenAPI document of each completion route (docs/security.md#priority-classes-who-may-set-x-sluice-priority). The
 * document is fixed at build time with the default name; `setupOpenApi` renames or drops the
 * parameter to match `--priority-header`.
 */
const PriorityHeader = (): MethodDecorator =>
  ApiHeader({
    name: DEFAULT_PRIORITY_HEADER,
    required: false,
    enum: [...PRIORITY_CLASSES],
    description:
      'Priority class (absent: standard). Sheddable requests are judged with every busy ' +
      'threshold x the sheddable factor (default 0.8), critical ones x the critical factor ' +
      '(default 1.2, the decode ratio capped at 1): sheddable traffic is refused first, critical ' +
      'last. Any other value: 400 invalid_request_error. Set it at a trusted gateway, not by ' +
      'clients (docs/security.md).',
  });

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
  @PriorityHeader()
  @HttpCode(200)
  @UseGuards(AdmissionGuard)
  chat(@Body() body: ChatCompletionRequestDto, @Res() reply: FastifyReply): Promise<void> {
    return this.proxy.forward('chat_completions', '/v1/chat/completions', body, reply);
  }

  @Post('completions')
  @PriorityHeader()
  @HttpCode(200)
  @UseGuards(AdmissionGuard)
  complete(@Body() body: CompletionRequestDto, @Res() reply: FastifyReply): Promise<void> {
    return this.proxy.forward('completions', '/v1/completions', body, reply);
  }

  @Post('embeddings')
  @PriorityHeader()
  @HttpCode(200)
  @UseGuards(AdmissionGuard)
  embed(@Body() body: EmbeddingRequestDto, @Res() reply: FastifyReply): Promise<void> {
    return this.proxy.forward('embeddings', '/v1/embeddings', body, reply);
  }
}
