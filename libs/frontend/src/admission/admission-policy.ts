import { PriorityClass } from '../config/priority';
import { ErrorType, EndpointLabel } from '../metrics/metric-names';
import { FrontendError } from '../errors/frontend.error';

/** What a policy may look at for one request, and how to hear that it has ended. */
export interface AdmissionRequest {
  readonly model: string;
  readonly endpoint: EndpointLabel;
  /** The bearer token an OpenAI client sends as its API key, or null. */
  readonly apiKey: string | null;
  readonly ip: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  /**
   * The priority class the request is judged and routed as (docs/security.md#priority-classes-who-may-set-x-sluice-priority): from the priority
   * header, or lower when a policy before this one lowered it.
   */
  readonly priority: PriorityClass;
  /**
   * Serves the request as class `c` when that is lower than its current class (asking for a
   * higher one changes nothing): once the policies have run, admission judges it again with the
   * thresholds of `c` (a 503 if every worker is busy for `c`), and the router and the counters
   * use `c`.
   */
  lowerPriority(c: PriorityClass): void;
  /** Runs once when the response is finished or the client has gone away. */
  onFinish(callback: () => void): void;
}

/**
 * An admission policy of your own, run by the admission guard after the built-in busy check
 * for every request that check admits. To reject, throw `AdmissionRejectedError`: the same
 * exception filter answers it as `{"message","type","code"}`. Keep `admit` fast: it is on the
 * path of every request. Register with `createFrontendApp(config, { policies: [MyPolicy] })`.
 */
export abstract class AdmissionPolicy {
  /** Names the policy in logs. */
  abstract readonly name: string;

  abstract admit(request: AdmissionRequest): void | Promise<void>;
}

/** A policy's refusal; counted under `error_type="overload"`, not as a busy-worker rejection. */
export class AdmissionRejectedError extends FrontendError {
  readonly status: number;
  readonly type: string;
  readonly errorType: ErrorType = 'overload';

  constructor(message: string, options: { status?: number; type?: string } = {}) {
    super(message);
    this.name = 'AdmissionRejectedError';
    this.status = options.status ?? 429;
    this.type = options.type ?? 'rate_limit_error';
  }
}

/** The configured policies, in the order they run; a class token for DI. */
export class AdmissionPolicies {
  constructor(readonly list: readonly AdmissionPolicy[]) {}
}
