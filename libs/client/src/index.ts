export { SluiceClient } from './sluice.client';
export type { CallOptions, RetryOptions, SluiceClientOptions } from './client.options';
export { RetryBudget } from './retry.budget';
export type { RetryBudgetOptions } from './retry.budget';
export { SluiceStream } from './sse.stream';
export {
  SluiceConnectionError,
  SluiceError,
  SluiceHttpError,
  SluiceOverloadedError,
  SluiceStreamError,
} from './client.errors';
export type { SluiceErrorBody } from './client.errors';
export type * from './openai.types';
