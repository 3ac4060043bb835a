import { Dispatcher, Pool } from 'undici';

export type HttpResponse = Dispatcher.ResponseData;
export type ResponseBody = Dispatcher.ResponseData['body'];

/** One attempt of a request, sent through undici; JSON in, raw response out. */
export class HttpTransport {
  private readonly origin: string;
  private readonly basePath: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(
    baseUrl: string,
    dispatcher: Dispatcher | undefined,
    private readonly headers: Record<string, string> = {},
  ) {
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.ownsDispatcher = dispatcher === undefined;
    this.dispatcher =
      dispatcher ?? new Pool(this.origin, { keepAliveTimeout: 30_000, connect: { noDelay: true } });
  }

  send(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse> {
    return this.dispatcher.request({
      origin: this.origin,
      path: this.basePath + path,
      method,
      headers: {
        accept: 'application/json, text/event-stream',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...this.headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  }

  /** Closes the connection pool this transport made; a dispatcher passed in is left open. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/** True when the error says nothing reached the server: the TCP connection was refused. */
export function isConnectionRefused(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  if ((err as { code?: unknown }).code === 'ECONNREFUSED') return true;
  // Happy-eyeballs tries every address; all refusing gives an AggregateError.
  const inner = (err as { errors?: unknown }).errors;
  return Array.isArray(inner) && inner.length > 0 && inner.every(isConnectionRefused);
}
