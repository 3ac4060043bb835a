import { DEFAULT_PRIORITY, PRIORITY_CLASSES, PriorityClass } from '../config/priority';
import { FrontendError, withoutStack } from '../errors/frontend.error';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** The priority header holds something other than a class name: 400 (docs/security.md#priority-classes-who-may-set-x-sluice-priority). */
export class InvalidPriorityError extends FrontendError {
  readonly status = 400;
  readonly type = 'invalid_request_error';
  readonly errorType = 'validation';

  constructor(header: string) {
    super(`Invalid ${header} header: expected one of ${PRIORITY_CLASSES.join(', ')}`);
    this.name = 'InvalidPriorityError';
  }
}

/**
 * Reads a request's priority class from its header (`--priority-header`, default
 * `x-sluice-priority`): `critical`, `standard` or `sheddable`, exactly; absent means standard,
 * and so does every request when the header is disabled. A repeated header arrives joined with
 * commas and is refused like any other value.
 */
export class PriorityReader {
  /** `header`: lower case, as Node keys headers; null: the header is disabled. */
  constructor(readonly header: string | null) {}

  /** The class, or undefined when the header holds anything else (the request gets a 400). */
  classOf(headers: Headers): PriorityClass | undefined {
    if (this.header === null) return DEFAULT_PRIORITY;
    const value = headers[this.header];
    switch (value) {
      case undefined:
        return DEFAULT_PRIORITY;
      case 'critical':
      case 'standard':
      case 'sheddable':
        return value;
      default:
        return undefined;
    }
  }

  /** The class; throws `InvalidPriorityError` (answered 400) for a value that is not one. */
  require(headers: Headers): PriorityClass {
    const c = this.classOf(headers);
    if (c === undefined) {
      throw withoutStack(() => new InvalidPriorityError(this.header ?? 'priority'));
    }
    return c;
  }
}

/**
 * The class a request is served as, kept on the request object itself (Fastify's request, which
 * the hooks, the guard, the filters and the proxy all see) from the moment admission reads it:
 * the one place every counter and the router take it from. A policy may lower it (see
 * `PriorityByKeyPolicy`); whoever lowers it sets it here again. A symbol-keyed property rather
 * than a WeakMap: a WeakMap entry per request is work for the garbage collector on the 503
 * path, the property is not.
 */
const PRIORITY = Symbol('sluice.priority');

type Classed = { [PRIORITY]?: PriorityClass };

export function setRequestPriority(request: object, c: PriorityClass): void {
  (request as Classed)[PRIORITY] = c;
}

/** The class admission gave the request; standard for a request it has not seen. */
export function requestPriority(request: object): PriorityClass {
  return (request as Classed)[PRIORITY] ?? DEFAULT_PRIORITY;
}
