export { FrontendError, withoutStack } from './frontend.error';
export { ServiceOverloadedError } from './service-overloaded.error';
export { ModelNotFoundError, NoWorkersAvailableError } from './model-unavailable.error';
export { UpstreamError, UpstreamTimeoutError } from './upstream.error';
export { ShuttingDownError } from './shutting-down.error';
