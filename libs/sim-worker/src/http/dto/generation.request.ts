import { StreamFlags } from './request-fields';

export type FinishReason = 'stop' | 'length';

/** A chat or text completion request, reduced to what the simulator needs. */
export interface GenerationRequest extends StreamFlags {
  readonly model: string | undefined;
  /** What the deterministic output is derived from. */
  readonly promptText: string;
  /** `estimatePromptTokens` of the body, as the frontend computes it. */
  readonly promptTokens: number;
  readonly maxTokens: number;
  /** `length` when the client set a limit (it is always reached), else `stop`. */
  readonly finishReason: FinishReason;
}
