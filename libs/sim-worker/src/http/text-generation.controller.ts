import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { parseChatCompletionRequest } from './dto/chat-completion.request';
import { parseCompletionRequest } from './dto/completion.request';
import { GenerationRequest } from './dto/generation.request';
import { ParseBodyPipe } from './dto/parse-body.pipe';
import { chatCompletionFormat } from './format/chat-completion.format';
import { textCompletionFormat } from './format/text-completion.format';
import { GenerationService } from './generation.service';

/** `@Res()`: a streamed answer hijacks the reply, so the service writes every response itself. */
@Controller('v1')
export class TextGenerationController {
  constructor(private readonly generation: GenerationService) {}

  @Post('chat/completions')
  @HttpCode(200)
  chat(
    @Body(new ParseBodyPipe(parseChatCompletionRequest)) request: GenerationRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.generation.respond(request, chatCompletionFormat, reply);
  }

  @Post('completions')
  @HttpCode(200)
  complete(
    @Body(new ParseBodyPipe(parseCompletionRequest)) request: GenerationRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.generation.respond(request, textCompletionFormat, reply);
  }
}
