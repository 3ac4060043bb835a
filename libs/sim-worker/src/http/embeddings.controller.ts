import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { EmbeddingRequest, parseEmbeddingRequest } from './dto/embedding.request';
import { ParseBodyPipe } from './dto/parse-body.pipe';
import { EmbeddingResponse, EmbeddingService } from './embedding.service';

@Controller('v1')
export class EmbeddingsController {
  constructor(private readonly embeddings: EmbeddingService) {}

  /** The raw response is only watched for a disconnect; Nest still sends the body. */
  @Post('embeddings')
  @HttpCode(200)
  embed(
    @Body(new ParseBodyPipe(parseEmbeddingRequest)) request: EmbeddingRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EmbeddingResponse | null> {
    return this.embeddings.embed(request, reply.raw);
  }
}
