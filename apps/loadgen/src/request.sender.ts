import { Dispatcher } from 'undici';
import { LoadgenOptions } from './loadgen.options';
import { buildRequestBody, requestPath } from './prompt.builder';
import {
  classifyErrorResponse,
  classifyFailure,
  classifyUnaryResponse,
  RequestOutcome,
} from './response.classifier';
import { OpenAiStreamReader } from './sse-stream.parser';

type ResponseBody = Dispatcher.ResponseData['body'];

/** Sends one generated request and reads its answer to the end. */
export class RequestSender {
  private readonly path: string;

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly options: LoadgenOptions,
    /** Aborts every request in flight (drain timeout, Ctrl-C). */
    private readonly abortSignal: AbortSignal,
  ) {
    this.path = requestPath(options);
  }

  async send(index: number): Promise<RequestOutcome> {
    const body = buildRequestBody(this.options, index);
    const start = performance.now();
    try {
      const res = await this.dispatcher.request({
        path: this.path,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: this.abortSignal,
      });
      if (res.statusCode !== 200) {
        // Read the whole answer: a 503 counts as a rejection only with the contract's body.
        const text = await res.body.text();
        return classifyErrorResponse(res.statusCode, text, performance.now() - start);
      }
      if (!this.options.stream) {
        const text = await res.body.text();
        return classifyUnaryResponse(text, performance.now() - start);
      }
      return await this.readStream(res.body, start);
    } catch (err) {
      if (this.abortSignal.aborted) return { kind: 'aborted' };
      return classifyFailure(err);
    }
  }

  private async readStream(body: ResponseBody, start: number): Promise<RequestOutcome> {
    const reader = new OpenAiStreamReader();
    const decoder = new TextDecoder();
    for await (const chunk of body as AsyncIterable<Buffer>) {
      reader.push(decoder.decode(chunk, { stream: true }), performance.now());
    }
    const end = performance.now();
    reader.push(decoder.decode(), end);
    reader.end(end);
    const firstDataAt = reader.firstDataAtMs;
    if (reader.failed) return { kind: 'error', label: 'stream_error', connectFailure: false };
    if (!reader.done || firstDataAt === null) {
      return { kind: 'error', label: 'stream_truncated', connectFailure: false };
    }
    return {
      kind: 'ok',
      latencyMs: end - start,
      ttftMs: firstDataAt - start,
      outputTokens: reader.outputTokens,
    };
  }
}
