import { Injectable } from '@nestjs/common';
import { WorkerRegistry } from '../monitor/worker-registry.service';

export interface ModelDto {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

export interface ModelListDto {
  object: 'list';
  data: ModelDto[];
}

/** GET /v1/models: every model with at least one live worker. */
@Injectable()
export class ModelsService {
  private readonly firstSeen = new Map<string, number>();

  constructor(private readonly registry: WorkerRegistry) {}

  list(): ModelListDto {
    const data: ModelDto[] = [];
    for (const name of this.registry.modelNames()) {
      if (!this.registry.model(name)?.workers.size) continue;
      let created = this.firstSeen.get(name);
      if (created === undefined) {
        created = Math.floor(Date.now() / 1000);
        this.firstSeen.set(name, created);
      }
      data.push({ id: name, object: 'model', created, owned_by: 'sluice' });
    }
    return { object: 'list', data };
  }
}
