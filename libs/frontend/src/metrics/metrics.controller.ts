import { Controller, Get, Header } from '@nestjs/common';
import { register } from 'prom-client';
import { WorkerGaugesRenderer } from './worker-gauges.renderer';

/**
 * `GET /metrics`: prom-client's registry, then the per-worker gauges, which are written apart
 * so that a scrape with thousands of ranks does not hold the event loop (see the renderer).
 * Answered as bytes: the worker gauges arrive encoded, in chunks, and are only concatenated.
 */
@Controller()
export class MetricsController {
  constructor(private readonly workerGauges: WorkerGaugesRenderer) {}

  @Get()
  @Header('Content-Type', register.contentType)
  async index(): Promise<Buffer> {
    const registry = Buffer.from(`${await register.metrics()}\n`);
    return Buffer.concat([registry, ...(await this.workerGauges.render())]);
  }
}
