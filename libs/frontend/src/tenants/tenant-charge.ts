/** What a request's tenant was charged at admission, settled when the request ends. */
export interface TenantCharge {
  /**
   * The request is sent to a worker: counted as the tenant's `admitted` request. Once; a request
   * refused after admission (the router queue's 503s) or whose client left first never is.
   */
  dispatched(): void;
  /**
   * The request was answered a 503 after admission (the router queue, the objective gate, no
   * live worker, a policy): counted as the tenant's `overloaded` request, and its request and
   * tokens given back to its limits, as a 503 at admission consumes nothing. Once.
   */
  refused(): void;
  /**
   * The usage the worker reported (null where it did not): the tokens charged are corrected to
   * it. Called once, when an answer was relayed; a request that never got one is refunded.
   */
  usage(promptTokens: number | null, completionTokens: number | null): void;
}

const CHARGE = Symbol('sluice.tenantCharge');

/** Keeps the charge beside the request, for the proxy to settle. */
export function setTenantCharge(req: object, charge: TenantCharge): void {
  (req as { [CHARGE]?: TenantCharge })[CHARGE] = charge;
}

export function tenantCharge(req: object): TenantCharge | undefined {
  return (req as { [CHARGE]?: TenantCharge })[CHARGE];
}

/**
 * An error answered 503 because the fleet could not take the request (every 503 but a drain's,
 * which is a shutdown, not a refusal): the tenant's `overloaded` outcome.
 */
export function isOverload503(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { status?: unknown; refusal?: { rejection?: unknown } };
  return e.status === 503 && e.refusal?.rejection !== false;
}

const PROMPT = /"prompt_tokens"\s*:\s*(\d{1,12})/;
const COMPLETION = /"completion_tokens"\s*:\s*(\d{1,12})/;

/** The `usage` an OpenAI answer (or one event of a stream) reports, if it does. */
export function usageIn(text: string): { prompt: number; completion: number | null } | null {
  const at = text.lastIndexOf('"usage"');
  if (at === -1) return null;
  const tail = text.slice(at);
  const prompt = PROMPT.exec(tail);
  if (prompt === null) return null;
  const completion = COMPLETION.exec(tail);
  return { prompt: Number(prompt[1]), completion: completion ? Number(completion[1]) : null };
}
