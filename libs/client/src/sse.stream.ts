import { SluiceError, SluiceStreamError } from './client.errors';
import { HttpResponse, ResponseBody } from './http.transport';
import { SseDataParser as SseParser } from '@sluice/contracts';

/**
 * The chunks of a streamed completion, parsed, ending at `data: [DONE]`. Read it once with
 * `for await`; leaving the loop early closes the connection. Failures after the first byte are
 * thrown as `SluiceStreamError` and never retried: the tokens already received would repeat.
 */
export class SluiceStream<T> implements AsyncIterable<T> {
  readonly status: number;
  readonly headers: HttpResponse['headers'];
  private readonly body: ResponseBody;
  private used = false;

  constructor(response: HttpResponse) {
    this.status = response.statusCode;
    this.headers = response.headers;
    this.body = response.body;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    if (this.used) throw new SluiceError('a SluiceStream can be read only once');
    this.used = true;
    const parser = new SseParser();
    const decoder = new TextDecoder();
    // Not destroyed on `return`: after [DONE] the rest is drained so the socket is reused.
    const chunks = this.body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>;
    let done = false;
    try {
      for await (const chunk of chunks) {
        for (const data of parser.push(decoder.decode(chunk, { stream: true }))) {
          done = data === '[DONE]';
          if (done) break;
          yield parseChunk<T>(data);
        }
        if (done) break;
      }
      if (!done) {
        for (const data of [...parser.push(decoder.decode()), ...parser.end()]) {
          if (data === '[DONE]') return;
          yield parseChunk<T>(data);
        }
        throw new SluiceStreamError('the stream ended before data: [DONE]');
      }
    } finally {
      if (done) void this.body.dump().catch(() => undefined);
      else this.body.destroy();
    }
  }

  /** Releases the connection without reading (more of) the stream. */
  cancel(): void {
    this.used = true;
    this.body.destroy();
  }
}

function parseChunk<T>(data: string): T {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw new SluiceStreamError(`the stream sent an event that is not JSON: ${data.slice(0, 200)}`);
  }
  // Sluice reports a worker failing mid-stream as `data: {"error": {message, type, code}}`.
  if (json && typeof json === 'object' && 'error' in json && json.error) {
    const error = json.error as { message?: unknown };
    const message = typeof error.message === 'string' ? error.message : JSON.stringify(error);
    throw new SluiceStreamError(message, error);
  }
  return json as T;
}
