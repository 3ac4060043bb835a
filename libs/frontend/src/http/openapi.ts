import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** Serves the OpenAPI document at /docs-json and its UI at /docs. */
export function setupOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Sluice')
    .setDescription(
      'Admission-control frontend for LLM inference fleets: the OpenAI API with load shedding, ' +
        'and per-model busy thresholds managed with an audit trail.',
    )
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'an --admin-token TOKEN' })
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}
