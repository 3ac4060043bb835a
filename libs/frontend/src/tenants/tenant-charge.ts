/** What a request's tenant was charged at admission, settled when the request ends. */
export interface TenantCharge {
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
