import { CallOptions, resolveRetry, SluiceClientOptions } from './client.options';
import { HttpResponse, HttpTransport } from './http.transport';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  Completion,
  CompletionChunk,
  CompletionRequest,
  EmbeddingList,
  EmbeddingRequest,
  ModelList,
  StreamRequest,
} from './openai.types';
import { RetryBudget } from './retry.budget';
import { RetryExecutor } from './retry.executor';
import { abortReason } from './retry.sleep';
import { SluiceStream } from './sse.stream';

/**
 * A client for Sluice's OpenAI endpoints that retries load shedding (503) politely: capped
 * exponential backoff with full jitter, never sooner than `Retry-After`, at most `maxAttempts`
 * requests per call, and a retry budget shared by all calls of the instance.
 */
export class SluiceClient {
  /** The retry budget shared by this client's calls; undefined when turned off. */
  readonly budget: RetryBudget | undefined;
  private readonly transport: HttpTransport;
  private readonly executor: RetryExecutor;

  constructor(options: SluiceClientOptions) {
    const retry = resolveRetry(options);
    this.budget = retry.budget;
    this.transport = new HttpTransport(options.baseUrl, options.dispatcher, options.headers);
    this.executor = new RetryExecutor(retry);
  }

  chatCompletions(body: ChatCompletionRequest, call?: CallOptions): Promise<ChatCompletion> {
    return this.json('POST', '/v1/chat/completions', body, call);
  }

  completions(body: CompletionRequest, call?: CallOptions): Promise<Completion> {
    return this.json('POST', '/v1/completions', body, call);
  }

  embeddings(body: EmbeddingRequest, call?: CallOptions): Promise<EmbeddingList> {
    return this.json('POST', '/v1/embeddings', body, call);
  }

  models(call?: CallOptions): Promise<ModelList> {
    return this.json('GET', '/v1/models', undefined, call);
  }

  /**
   * Resolves once the stream has started (an overload is retried, or thrown, before that);
   * iterate the result for the chunks.
   */
  async chatCompletionsStream(
    body: StreamRequest<ChatCompletionRequest>,
    call?: CallOptions,
  ): Promise<SluiceStream<ChatCompletionChunk>> {
    const res = await this.send('POST', '/v1/chat/completions', { ...body, stream: true }, call);
    return new SluiceStream<ChatCompletionChunk>(res);
  }

  async completionsStream(
    body: StreamRequest<CompletionRequest>,
    call?: CallOptions,
  ): Promise<SluiceStream<CompletionChunk>> {
    const res = await this.send('POST', '/v1/completions', { ...body, stream: true }, call);
    return new SluiceStream<CompletionChunk>(res);
  }

  /** Closes the connection pool the client made (not a `dispatcher` passed in). */
  close(): Promise<void> {
    return this.transport.close();
  }

  private async json<T>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    call: CallOptions | undefined,
  ): Promise<T> {
    const res = await this.send(method, path, body, call);
    try {
      return (await res.body.json()) as T;
    } catch (err) {
      if (call?.signal?.aborted) throw abortReason(call.signal);
      throw err;
    }
  }

  private send(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    call: CallOptions | undefined,
  ): Promise<HttpResponse> {
    return this.executor.run(
      (signal) => this.transport.send(method, path, body, signal),
      call?.signal,
      call?.maxAttempts,
    );
  }
}
