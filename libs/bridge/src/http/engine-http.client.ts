import { Dispatcher } from 'undici';
import { EngineHttp, GetOptions } from '../engines/engine-adapter';
import { ScrapeFailure } from './scrape-failure';

/** An engine's answer above this is not read further: the scrape is unparsable. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const ABSENT_STATUSES = new Set([404, 405, 501]);
const DRAIN_LIMIT_BYTES = 64 * 1024;

/** Answers of static endpoints kept across scrapes of one target (see GetOptions.cacheMs). */
export class AnswerCache {
  private readonly entries = new Map<string, { body: string | undefined; at: number }>();
  /** See EngineHttp.notes. */
  readonly notes = new Set<string>();

  get(path: string, maxAgeMs: number, now: number): { body: string | undefined } | undefined {
    const e = this.entries.get(path);
    return e && now - e.at < maxAgeMs ? e : undefined;
  }

  set(path: string, body: string | undefined, now: number): void {
    this.entries.set(path, { body, at: now });
  }

  /** After a failed scrape: the engine may have restarted with another model or size. */
  clear(): void {
    this.entries.clear();
    this.notes.clear();
  }
}

export interface ScrapeHttpContext {
  readonly baseUrl: URL;
  readonly dispatcher: Dispatcher;
  /** Aborted at the scrape's deadline (reason: a timeout ScrapeFailure) or when stopping. */
  readonly signal: AbortSignal;
  readonly cache: AnswerCache;
  readonly now: () => number;
  readonly maxBodyBytes: number;
}

/** The HTTP side of one scrape: bounded reads, every failure classified for the counter. */
export class ScrapeHttp implements EngineHttp {
  constructor(private readonly ctx: ScrapeHttpContext) {}

  get notes(): Set<string> {
    return this.ctx.cache.notes;
  }

  async text(path: string, options: GetOptions = {}): Promise<string | undefined> {
    const cacheMs = options.cacheMs ?? 0;
    const cached = cacheMs > 0 ? this.ctx.cache.get(path, cacheMs, this.ctx.now()) : undefined;
    if (cached) return cached.body;
    const body = await this.get(path, options.optional ?? false);
    if (cacheMs > 0) this.ctx.cache.set(path, body, this.ctx.now());
    return body;
  }

  async json(path: string, options: GetOptions = {}): Promise<unknown> {
    const body = await this.text(path, options);
    if (body === undefined) return undefined;
    try {
      return JSON.parse(body) as unknown;
    } catch {
      throw new ScrapeFailure('unparsable', `GET ${path}: not JSON`);
    }
  }

  private async get(path: string, optional: boolean): Promise<string | undefined> {
    const { baseUrl, dispatcher, signal } = this.ctx;
    let res: Dispatcher.ResponseData;
    try {
      res = await dispatcher.request({
        origin: baseUrl.origin,
        path: `${baseUrl.pathname.replace(/\/+$/, '')}${path}`,
        method: 'GET',
        signal,
        headers: { accept: 'application/json, text/plain;q=0.9, */*;q=0.5' },
      });
    } catch (err) {
      throw this.failure(path, err);
    }
    if (optional && ABSENT_STATUSES.has(res.statusCode)) {
      await drain(res.body);
      return undefined;
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await drain(res.body);
      throw new ScrapeFailure('error', `GET ${path}: HTTP ${res.statusCode}`);
    }
    return this.read(path, res);
  }

  private async read(path: string, res: Dispatcher.ResponseData): Promise<string> {
    const limit = this.ctx.maxBodyBytes;
    const tooBig = (): ScrapeFailure => {
      // Destroying the body closes the connection: the rest is never read.
      res.body.destroy();
      return new ScrapeFailure('unparsable', `GET ${path}: answer larger than ${limit} bytes`);
    };
    if (Number(res.headers['content-length'] ?? 0) > limit) throw tooBig();
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        size += buf.length;
        if (size > limit) throw tooBig();
        chunks.push(buf);
      }
    } catch (err) {
      throw this.failure(path, err);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  }

  private failure(path: string, err: unknown): ScrapeFailure {
    if (err instanceof ScrapeFailure) return err;
    const reason: unknown = this.ctx.signal.reason;
    if (this.ctx.signal.aborted) {
      return reason instanceof ScrapeFailure
        ? reason
        : new ScrapeFailure('timeout', `GET ${path}: aborted`);
    }
    const code = (err as { code?: unknown } | null)?.code;
    const what = typeof code === 'string' ? code : err instanceof Error ? err.message : String(err);
    return new ScrapeFailure('error', `GET ${path}: ${what}`);
  }
}

async function drain(body: Dispatcher.ResponseData['body']): Promise<void> {
  try {
    await body.dump({ limit: DRAIN_LIMIT_BYTES });
  } catch {
    // the connection is gone; nothing to keep
  }
}
