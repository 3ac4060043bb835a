/** Body of every error the frontend sends (docs/api.md#errors). Key order is part of the contract. */
export interface OpenAiErrorBody {
  message: string;
  type: string;
  code: number;
  details?: unknown;
}

export const OVERLOAD_MESSAGE =
  'Service temporarily unavailable: All workers are busy, please retry later';
