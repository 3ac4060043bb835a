import { StreamUsage, UsageTail, settleWhole } from './tenant-usage';
import { isOverload503, TenantCharge, tenantCharge } from '../tenants/tenant-charge';
import { BadRequestException, Injectable, RawBodyRequest } from '@nestjs/common';
import { estimatePromptTokens } from '@sluice/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable, pipeline } from 'node:stream';
import { Dispatcher } from 'undici';
import { UpstreamError, UpstreamTimeoutError } from './errors/upstream.error';
import { FrontendConfig } from '../config/frontend-config';
import { PriorityClass } from '../config/priority';
import { errorBody } from '../errors/error-body';
import { EndpointLabel, ErrorType } from '../metrics/metric-names';
import { requestPriority } from '../priority/request-priority';
import { RequestTenant, requestTenant } from '../tenants/request-tenant';
import { RequestMetricsService } from '../request-metrics/request-metrics.service';
import { TtftPredictor } from '../ttft-prediction/ttft-predictor.service';
import { OutlierEjection } from '../worker-monitor/outlier-ejection';
import { Lease, LeaseObjective, RouterService } from './routing/router.service';
import { Cancellation } from './cancellation';
import { LOOP_STATUS, RequestLoopError } from './errors/request-loop.error';
import { SseEvents } from './upstream/sse-events';
import { HOP_HEADER, UpstreamClient } from './upstream/upstream.client';
import {
  AnswerTooLargeError,
  MidAnswerError,
  PASSED_HEADERS,
  PassedHeaders,
  StreamedAnswer,
  UnaryAnswer,
  isStreamed,
} from './upstream/whole-answer.handler';
import { AttemptResult, UpstreamAttempts } from './upstream/upstream-attempts';

/** The fields of an OpenAI body the proxy reads; the whole body is forwarded as received. */
export interface OpenAiRequestBody {
  readonly model: string;
  readonly stream?: boolean;
  /** The output limit (checked by the body pipe): sizes the KV blocks reserved on the worker. */
  readonly max_tokens?: number;
  readonly max_completion_tokens?: number;
}

const STREAMED: AttemptResult<Dispatcher.ResponseData> = {
  status: (r) => r.statusCode,
  // Read a little to keep the connection, else cut it: nobody wants this error body.
  discard: (r) => void r.body.dump().catch(() => undefined),
};
const UNARY: AttemptResult<UnaryAnswer> = { status: (a) => a.statusCode, discard: () => undefined };

/** Names the worker that served the request, for operators tracing a slow or odd answer. */
export const WORKER_HEADER = 'x-sluice-worker-id';

interface Exchange {
  readonly model: string;
  readonly endpoint: EndpointLabel;
  readonly stream: boolean;
  /** The class admission gave the request: the router picks only workers free for it. */
  readonly priority: PriorityClass;
  readonly startedMs: number;
  readonly promptTokens: number;
  readonly maxTokens: number;
  /** Whom it counts for in the model's fair share, a retry on another worker included. */
  readonly tenant: RequestTenant;
  readonly cancel: Cancellation;
  lease: Lease;
  ended: boolean;
  /** The first token (for a unary answer: the whole answer) has arrived, or it failed first. */
  answered: boolean;
  /** Its objective when it is a would-be refusal admitted as a sample (kept across a retry). */
  readonly sample: LeaseObjective | null;
  /** What its tenant was charged, settled with the usage of the answer (docs/api.md#tenants). */
  readonly charge: TenantCharge | undefined;
}

/**
 * Sends an admitted request to the chosen worker and relays the answer: SSE passes through
 * chunk by chunk, a client that goes away aborts the upstream request, and a worker that fails
 * before answering is replaced by another non-busy worker (`UpstreamAttempts`).
 */
@Injectable()
export class ProxyService {
  /** Requests between arrival and their last byte (queued ones included): what a drain waits for. */
  active = 0;
  private readonly attempts: UpstreamAttempts;

  constructor(
    private readonly config: FrontendConfig,
    private readonly router: RouterService,
    private readonly upstream: UpstreamClient,
    private readonly metrics: RequestMetricsService,
    private readonly predictor: TtftPredictor,
    ejection: OutlierEjection,
  ) {
    this.attempts = new UpstreamAttempts(config, router, metrics, ejection);
  }

  async forward(
    endpoint: EndpointLabel,
    path: string,
    body: OpenAiRequestBody,
    reply: FastifyReply,
  ): Promise<void> {
    // Another frontend sent this here: proxying it again would make the loop a storm.
    if (reply.request.headers[HOP_HEADER] !== undefined) throw new RequestLoopError(HOP_HEADER);
    const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? 0;
    this.requireWithinContext(body, maxTokens);
    const startedMs = performance.now();
    const cancel = new Cancellation();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) cancel.cancel();
    });
    // Its client left while admission looked: the close event above has fired already.
    if (reply.raw.destroyed) cancel.cancel();
    const promptTokens = estimatePromptTokens(body);
    const priority = requestPriority(reply.request);
    const tenant = requestTenant(reply.request);
    this.active++;
    let lease: Lease;
    try {
      lease = await this.router.acquire(
        body.model,
        promptTokens,
        cancel.controller,
        priority,
        maxTokens,
        endpoint,
        tenant,
      );
    } catch (err) {
      this.active--;
      // Its client left while it waited in the queue: nobody to answer.
      if (cancel.cancelled) return;
      // Refused by the router (queue full or timed out, pushed out, objective, no worker): the
      // tenant's `overloaded` request, its charge given back (docs/api.md#tenant-usage).
      if (isOverload503(err)) tenantCharge(reply.request)?.refused();
      throw err;
    }
    if (cancel.cancelled) {
      // Served by the queue in the same turn as its client left: never sent on.
      lease.release();
      this.active--;
      return;
    }
    const x: Exchange = {
      model: body.model,
      endpoint,
      stream: body.stream === true,
      priority,
      startedMs,
      promptTokens,
      maxTokens,
      tenant,
      cancel,
      lease,
      ended: false,
      answered: false,
      sample: lease.objective?.sample ? lease.objective : null,
      charge: tenantCharge(reply.request),
    };
    this.metrics.inflight.inc({ model: x.model });
    this.metrics.admitted(x.model);
    x.charge?.dispatched();
    // The body as the client sent it (kept by the JSON parser), else serialised again.
    const raw = (reply.request as RawBodyRequest<FastifyRequest>).rawBody;
    const payload = raw ?? JSON.stringify(body);
    if (!x.stream) return this.forwardUnary(x, path, payload, reply);
    let response: Dispatcher.ResponseData;
    try {
      response = await this.attempts.send(
        x,
        (worker) => this.upstream.post(worker, path, payload, cancel.controller.signal),
        STREAMED,
      );
    } catch (err) {
      this.end(x, null);
      // The client went away while the worker was working: nobody to answer, not a worker fault.
      if (cancel.cancelled) return;
      throw err;
    }
    // The status line: the worker has read the request, so its next load report will hold it.
    x.lease.accepted();
    if (response.statusCode >= 400) return this.relayError(x, response, reply);
    const relay = Readable.from(this.relay(x, response.body, response.headers['content-type']), {
      objectMode: false,
    });
    // If the reply is torn down before the relay ever ran, its `finally` never runs: end here.
    relay.once('close', () => {
      if (!x.ended) x.cancel.cancel();
      this.end(x, null);
    });
    void reply
      .code(response.statusCode)
      .headers(passedFrom(response.headers) ?? {})
      .header('content-type', response.headers['content-type'] ?? 'application/json')
      .header('cache-control', 'no-cache')
      .header(WORKER_HEADER, x.lease.worker.id)
      .send(relay);
  }

  private logged(x: Exchange, err: unknown, failure: UpstreamError): UpstreamError {
    return this.attempts.logged(x, err, failure);
  }

  private logFailure(x: Exchange, err: unknown, outcome: string): void {
    this.attempts.logFailure(x, err, outcome);
  }

  private toUpstreamError(err: unknown, x: Exchange): UpstreamError {
    return this.attempts.toUpstreamError(err, x);
  }

  /** `--max-model-len`: more output than the context holds is refused as vLLM does (docs/api.md). */
  private requireWithinContext(body: OpenAiRequestBody, maxTokens: number): void {
    const limit = this.config.maxModelLen;
    if (limit === null || maxTokens <= limit) return;
    const field = body.max_completion_tokens === undefined ? 'max_tokens' : 'max_completion_tokens';
    throw new BadRequestException([
      `${field} (${maxTokens}) is greater than the model's context length (${limit} tokens)`,
    ]);
  }

  /**
   * A unary answer is read whole before replying, so a worker that dies mid-answer becomes a
   * clean 502 instead of a truncated body behind a 200; one that declares its length within the
   * cap is relayed as it arrives instead (`relayStreamed`), its length telling the client when
   * it was cut short.
   */
  private async forwardUnary(
    x: Exchange,
    path: string,
    payload: string | Buffer,
    reply: FastifyReply,
  ): Promise<void> {
    let answer: UnaryAnswer;
    try {
      answer = await this.attempts.send(
        x,
        (worker) => {
          // A unary answer comes whole, at the end: nothing tells when the worker took it, so
          // its reports are trusted from the moment it is sent (as for a report's own lag).
          x.lease.accepted();
          const call = this.upstream.postWhole(worker, path, payload);
          x.cancel.onCancel(call.abort);
          return call.answer;
        },
        UNARY,
      );
    } catch (err) {
      if (err instanceof MidAnswerError && err.cause instanceof AnswerTooLargeError) {
        this.end(x, null);
        throw this.tooLarge(x, err.cause);
      }
      // An error answer cut short is answered as its status says, with what was read (nothing).
      if (err instanceof MidAnswerError && err.statusCode >= 400 && !x.cancel.cancelled) {
        return this.answerWorkerError(x, err.statusCode, undefined, '', reply, undefined);
      }
      this.end(x, null);
      if (x.cancel.cancelled) return;
      if (!(err instanceof MidAnswerError)) throw err;
      const failure = this.toUpstreamError(err.cause, x);
      throw this.logged(
        x,
        err.cause,
        failure instanceof UpstreamTimeoutError
          ? failure
          : new UpstreamError(`${failure.message} (mid-answer)`, false),
      );
    }
    if (!isStreamed(answer) && answer.statusCode >= 400) {
      const { statusCode, contentType, body, passed } = answer;
      return this.answerWorkerError(x, statusCode, contentType, body, reply, passed);
    }
    x.lease.firstToken();
    const now = performance.now();
    this.metrics.firstByte(x.model, (now - x.startedMs) / 1000);
    // A unary answer's first token is not seen: the whole answer (or the first byte of one of a
    // declared length, which its worker had whole) stands for it, as in the TTFT histogram
    // above; the predictor and the prediction error take streamed answers only.
    this.sampleOutcome(x, now - x.lease.leasedAtMs);
    if (isStreamed(answer)) return this.relayStreamed(x, answer, reply);
    this.end(x, '');
    if (x.charge) settleWhole(x.charge, answer.body);
    this.sendUnary(x, answer, answer.body, reply);
  }

  /** The one writer of a worker's successful unary answer, whole or streamed. */
  private sendUnary(
    x: Exchange,
    answer: UnaryAnswer,
    body: Buffer | Readable,
    reply: FastifyReply,
  ): void {
    reply
      .code(answer.statusCode)
      .headers(answer.passed ?? {})
      .header('content-type', answer.contentType ?? 'application/json')
      .header(WORKER_HEADER, x.lease.worker.id);
    if (isStreamed(answer)) reply.header('content-length', answer.length);
    void reply.send(body);
  }

  /**
   * Relays a unary answer of a declared length as it arrives (decision 0215): the request ends
   * with its last byte. A worker that ends it short breaks the client's connection (its length
   * shows the cut) and is counted as an upstream failure; its tenant is charged the usage at its
   * end, read from its last bytes only.
   */
  private relayStreamed(x: Exchange, answer: StreamedAnswer, reply: FastifyReply): void {
    const source = answer.body;
    if (source.destroyed) {
      // It failed, or its client left, before a byte went out: answered as a whole answer is.
      this.end(x, null);
      if (x.cancel.cancelled) return;
      const failure = new UpstreamError(`Worker ${x.lease.worker.id} failed (mid-answer)`, false);
      throw this.logged(x, source.errored, failure);
    }
    // Its worker had the whole answer before it sent a byte: free for others, as when the
    // answer was read whole; a slow client holds only its own request (`end` at the last byte).
    x.lease.release();
    const tail = x.charge ? new UsageTail() : null;
    const body = tail ? pipeline(source, tail, () => undefined) : source;
    body.once('end', () => {
      if (x.charge) tail?.settle(x.charge);
      this.end(x, '');
    });
    body.once('error', (err) => {
      if (x.cancel.cancelled) return; // its client left: the close below ends it
      if (x.charge) tail?.settle(x.charge);
      const cause = err instanceof MidAnswerError ? err.cause : err;
      this.logFailure(x, cause, `connection to the client broken after ${answer.statusCode}`);
      this.end(x, 'upstream');
    });
    body.once('close', () => this.end(x, null));
    this.sendUnary(x, answer, body, reply);
  }

  private async relayError(
    x: Exchange,
    response: Dispatcher.ResponseData,
    reply: FastifyReply,
  ): Promise<void> {
    let text = '';
    try {
      text = await this.upstream.readCapped(response.body);
    } catch (err) {
      if (err instanceof AnswerTooLargeError) {
        this.end(x, null);
        throw this.tooLarge(x, err);
      }
    }
    const { statusCode, headers } = response;
    const passed = passedFrom(headers);
    this.answerWorkerError(x, statusCode, headers['content-type'], text, reply, passed);
  }

  /** A worker's 4xx is the client's fault and passes through; a 5xx becomes our 502. */
  private answerWorkerError(
    x: Exchange,
    status: number,
    contentType: string | string[] | undefined,
    body: string | Buffer,
    reply: FastifyReply,
    passed: PassedHeaders | undefined,
  ): void {
    if (status >= 500) {
      this.end(x, null);
      const loop =
        status === LOOP_STATUS ? ' (request loop: the worker endpoint is a Sluice frontend)' : '';
      const failure = new UpstreamError(
        `Worker ${x.lease.worker.id} answered ${status}${loop}`,
        false,
      );
      throw this.logged(x, `HTTP ${status}`, failure);
    }
    this.end(x, 'validation');
    void reply
      .code(status)
      .headers(passed ?? {})
      .header(WORKER_HEADER, x.lease.worker.id)
      .header('content-type', contentType ?? 'application/json')
      .send(body);
  }

  /** 502 for an answer over `--max-upstream-body-bytes`; the request was aborted already. */
  private tooLarge(x: Exchange, err: AnswerTooLargeError): UpstreamError {
    const failure = new UpstreamError(
      `Worker ${x.lease.worker.id} answered more than ${err.maxBytes} bytes (--max-upstream-body-bytes)`,
      false,
    );
    return this.logged(x, err, failure);
  }

  /**
   * Relays a streamed answer. Server-sent events go out whole (`SseEvents`): a stream that stops
   * inside an event, or fails, ends with the worker's whole events, then one error event of our
   * own, never a half event a client's parser would read as broken JSON.
   */
  private async *relay(
    x: Exchange,
    source: Dispatcher.ResponseData['body'],
    contentType: string | string[] | undefined,
  ): AsyncGenerator<Buffer> {
    let first = true;
    let outcome: ErrorType | null = null;
    const events = isEventStream(contentType) ? new SseEvents() : null;
    let failure: UpstreamError | null = null;
    const usage = x.charge ? new StreamUsage() : null;
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        if (first) {
          first = false;
          this.firstChunk(x);
        }
        if (events === null) {
          yield chunk;
          continue;
        }
        const whole = events.push(chunk);
        if (whole !== null) {
          usage?.see(whole);
          yield whole;
        }
        if (events.pendingBytes > this.config.maxUpstreamBodyBytes) {
          source.destroy();
          failure = this.cutShort(
            x,
            `sent an event over ${this.config.maxUpstreamBodyBytes} bytes`,
          );
          break;
        }
      }
      if (failure === null && events?.partial) failure = this.cutShort(x, 'ended mid-event');
      if (failure === null) outcome = '';
    } catch (err) {
      if (x.cancel.cancelled) return; // the client went away: nothing to tell it
      failure = this.toUpstreamError(err, x);
      this.logFailure(x, err, `stream ended with an error event (${failure.status})`);
    } finally {
      if (x.charge && usage) usage.settle(x.charge);
      if (outcome !== '') x.cancel.cancel();
      if (failure === null) this.end(x, outcome);
    }
    if (failure === null) return;
    this.sampleOutcome(x, null);
    this.end(x, 'upstream');
    // Only whole events went out before it: this one starts on an event boundary.
    yield Buffer.from(
      `data: ${JSON.stringify({ error: errorBody(failure.message, failure.type, failure.status) })}\n\n`,
    );
  }

  /** A stream the worker stopped, or must be stopped, inside an event. */
  private cutShort(x: Exchange, what: string): UpstreamError {
    const failure = new UpstreamError(`Worker ${x.lease.worker.id} ${what}`, false);
    this.logFailure(x, what, `stream ended with an error event (${failure.status})`);
    return failure;
  }

  /** The first streamed chunk: the first token. The predictor learns the worker's TTFT from it. */
  private firstChunk(x: Exchange): void {
    const now = performance.now();
    const { lease } = x;
    lease.firstToken();
    this.metrics.firstByte(x.model, (now - x.startedMs) / 1000);
    const ttftMs = now - lease.leasedAtMs;
    this.predictor.observe(
      lease.worker.id,
      x.promptTokens,
      lease.tokensAhead,
      lease.kvUsage,
      ttftMs,
    );
    if (lease.objective !== null) {
      this.metrics.predictionError(x.model, Math.abs(lease.objective.predictedMs - ttftMs) / 1000);
    }
    this.sampleOutcome(x, ttftMs);
  }

  /**
   * A would-be objective refusal admitted as a sample (`--ttft-slo-sample`): did its first token
   * come within the objective? Counted once, at the first token, or as `failed` at its end if
   * it failed before one (a client that went away is not counted).
   */
  private sampleOutcome(x: Exchange, ttftMs: number | null): void {
    if (x.answered) return;
    x.answered = true;
    if (x.sample === null) return;
    const objectiveMs = x.sample.objectiveMs;
    const outcome = ttftMs === null ? 'failed' : ttftMs <= objectiveMs ? 'met' : 'missed';
    this.metrics.sloSample(x.model, outcome);
  }

  /** Releases the worker and records the outcome; `null` = counted elsewhere or cancelled. */
  private end(x: Exchange, errorType: ErrorType | null): void {
    if (x.ended) return;
    x.ended = true;
    if (!x.cancel.cancelled) this.sampleOutcome(x, null);
    this.active--;
    x.lease.release();
    this.metrics.inflight.dec({ model: x.model });
    this.metrics.finished(x.model, (performance.now() - x.startedMs) / 1000);
    if (errorType !== null) this.metrics.answered(x.model, x.endpoint, x.stream, errorType);
  }
}

/** The worker's headers the client needs (PASSED_HEADERS), from a streamed call's answer. */
function passedFrom(headers: Dispatcher.ResponseData['headers']): PassedHeaders | undefined {
  let passed: PassedHeaders | undefined;
  for (const name of PASSED_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') (passed ??= {})[name] = value;
  }
  return passed;
}

function isEventStream(contentType: string | string[] | undefined): boolean {
  const type = Array.isArray(contentType) ? contentType[0] : contentType;
  return type?.trimStart().toLowerCase().startsWith('text/event-stream') ?? false;
}
