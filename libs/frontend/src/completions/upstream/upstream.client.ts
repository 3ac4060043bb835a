import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Dispatcher, Pool } from 'undici';
import { FrontendConfig } from '../../config/frontend-config';
import { WorkerEntry } from '../../worker-monitor/worker-entry';
import { RegistryObserver, WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { AnswerTooLargeError, UnaryAnswer, WholeAnswerHandler } from './whole-answer.handler';

/**
 * Set on every request the frontend proxies. A frontend that receives a request carrying it is
 * itself some frontend's "worker" (a report named a frontend's address): it answers with the loop
 * error instead of proxying again, so a loop costs one extra hop, not a request storm.
 */
export const HOP_HEADER = 'x-sluice-hop';

/** undici copies request headers, so one object serves every request. */
const JSON_HEADERS = { 'content-type': 'application/json', [HOP_HEADER]: '1' } as const;

interface Target {
  pool: Pool;
  basePath: string;
}

/**
 * One keep-alive connection pool per worker endpoint, made on first use and closed when a
 * worker at that endpoint is forgotten.
 */
@Injectable()
export class UpstreamClient implements OnModuleInit, OnModuleDestroy, RegistryObserver {
  private readonly targets = new Map<string, Target>();

  constructor(
    private readonly config: FrontendConfig,
    private readonly registry: WorkerRegistry,
  ) {}

  onModuleInit(): void {
    this.registry.observe(this);
  }

  async onModuleDestroy(): Promise<void> {
    const pools = [...this.targets.values()].map((t) => t.pool);
    this.targets.clear();
    await Promise.allSettled(pools.map((p) => p.destroy()));
  }

  post(
    worker: WorkerEntry,
    path: string,
    body: string | Buffer,
    signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    const target = this.target(worker.endpoint);
    return target.pool.request({
      method: 'POST',
      path: target.basePath + path,
      headers: JSON_HEADERS,
      body,
      signal,
      headersTimeout: this.config.upstreamTimeoutMs,
      bodyTimeout: this.config.upstreamTimeoutMs,
    });
  }

  /**
   * A unary call through undici's dispatch API, read whole unless it declares a length within
   * the cap (`StreamedAnswer`): no AbortSignal, no response object. `abort` cancels it at any
   * point.
   */
  postWhole(
    worker: WorkerEntry,
    path: string,
    body: string | Buffer,
  ): { answer: Promise<UnaryAnswer>; abort: () => void } {
    const target = this.target(worker.endpoint);
    let handler!: WholeAnswerHandler;
    const answer = new Promise<UnaryAnswer>((resolve, reject) => {
      handler = new WholeAnswerHandler(
        resolve,
        reject,
        this.config.maxUpstreamBodyBytes,
        this.config.upstreamTimeoutMs,
      );
    });
    target.pool.dispatch(
      {
        method: 'POST',
        path: target.basePath + path,
        headers: JSON_HEADERS,
        body,
        // The handler keeps both timeouts (see WholeAnswerHandler); 0 turns undici's off.
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      handler,
    );
    return { answer, abort: () => handler.abort() };
  }

  /**
   * Reads a streamed response's body whole (a worker's error answer), up to
   * `--max-upstream-body-bytes`: beyond, the request is aborted and AnswerTooLargeError thrown.
   */
  async readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
    const max = this.config.maxUpstreamBodyBytes;
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > max) {
        body.destroy();
        throw new AnswerTooLargeError(max);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  rankUpdated(): void {
    // Pools are created lazily on the first request, not on reports.
  }

  busyChanged(): void {
    // Busy workers keep their connections for when they free up.
  }

  workerRemoved(worker: WorkerEntry): void {
    const target = this.targets.get(worker.endpoint);
    if (!target) return;
    // A worker that comes back (or another at the same endpoint) gets a fresh pool on its next
    // request; close() lets requests already on these sockets finish.
    this.targets.delete(worker.endpoint);
    void target.pool.close().catch(() => undefined);
  }

  private target(endpoint: string): Target {
    let target = this.targets.get(endpoint);
    if (!target) {
      const url = new URL(endpoint);
      target = {
        pool: new Pool(url.origin, { keepAliveTimeout: 30_000, connect: { noDelay: true } }),
        basePath: url.pathname.replace(/\/+$/, ''),
      };
      this.targets.set(endpoint, target);
    }
    return target;
  }
}
