import { Controller, Get } from '@nestjs/common';
import { WorkerConfig } from '../config/worker-config';
import { unixSeconds } from './format/completion-format';

export interface ModelList {
  object: 'list';
  data: Array<{ id: string; object: 'model'; created: number; owned_by: string }>;
}

@Controller()
export class ModelsController {
  private readonly created = unixSeconds();

  constructor(private readonly config: WorkerConfig) {}

  @Get('v1/models')
  list(): ModelList {
    const id = this.config.options.model;
    return {
      object: 'list',
      data: [{ id, object: 'model', created: this.created, owned_by: 'sluice' }],
    };
  }

  /** Liveness as vLLM exposes it: 200 while the process serves HTTP. */
  @Get('health')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
