import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { FrontendConfig } from '../config/frontend-config';
import { DEFAULT_PRIORITY_HEADER } from '../config/priority';

/** Serves the OpenAPI document at /docs-json and its UI at /docs. */
export function setupOpenApi(app: INestApplication, config: FrontendConfig): void {
  const builder = new DocumentBuilder()
    .setTitle('Sluice')
    .setDescription(
      'Admission-control frontend for LLM inference fleets: the OpenAI API with load shedding, ' +
        'and per-model busy thresholds managed with an audit trail.',
    )
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'an --admin-token TOKEN' })
    .build();
  const document = SwaggerModule.createDocument(app, builder);
  namePriorityHeader(document, config.priorityHeader);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}

/** The priority header parameter as `--priority-header` has it: renamed, or gone with `none`. */
function namePriorityHeader(document: OpenAPIObject, header: string | null): void {
  if (header === DEFAULT_PRIORITY_HEADER) return;
  for (const item of Object.values(document.paths)) {
    for (const operation of [item.post, item.get, item.put, item.delete, item.patch]) {
      if (!operation?.parameters) continue;
      operation.parameters = operation.parameters.flatMap((p) => {
        if (!('in' in p) || p.in !== 'header' || p.name !== DEFAULT_PRIORITY_HEADER) return [p];
        return header === null ? [] : [{ ...p, name: header }];
      });
    }
  }
}
