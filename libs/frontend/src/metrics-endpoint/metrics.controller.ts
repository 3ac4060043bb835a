import { Controller, Get, StreamableFile } from '@nestjs/common';
import { Readable } from 'node:stream';
import { register } from 'prom-client';
import { WorkerGaugesRenderer } from '../worker-monitor/worker-gauges.renderer';

/**
 * `GET /metrics`: prom-client's registry, then the per-worker gauges, which are written apart
 * so that a scrape with thousands of ranks does not hold the event loop (see the renderer).
 * The chunks are streamed as they are: with 8,000 ranks the answer is megabytes, and copying
 * it into one buffer and writing it in one go would be the longest turn of the scrape.
 */
@Controller()
export class MetricsController {
  constructor(private readonly workerGauges: WorkerGaugesRenderer) {}

  @Get()
  async index(): Promise<StreamableFile> {
    const registry = Buffer.from(`${await register.metrics()}\n`);
    const chunks = [registry, ...(await this.workerGauges.render())];
    const length = chunks.reduce((n, c) => n + c.length, 0);
    return new StreamableFile(Readable.from(chunks, { objectMode: false }), {
      type: register.contentType,
      length,
    });
  }
}
