import { Injectable } from '@nestjs/common';
import { WorkerRegistry } from '../worker-monitor/worker-registry.service';

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
    // Model names come from load reports, i.e. from anyone on the bus: forget the ones the
    // registry has forgotten, so invented names cannot grow this map forever.
    for (const name of this.firstSeen.keys()) {
      if (!this.registry.model(name)) this.firstSeen.delete(name);
    }
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
