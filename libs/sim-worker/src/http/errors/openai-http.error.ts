/** An error the worker answers with an OpenAI-style JSON body `{message, type, code}`. */
export class OpenAiHttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidRequestError extends OpenAiHttpError {
  constructor(message: string) {
    super(400, 'invalid_request_error', message);
  }
}

export class ModelNotFoundError extends OpenAiHttpError {
  constructor(model: string) {
    super(404, 'not_found', `The model '${model}' does not exist`);
  }
}

/** A request that names a model must name the one this worker serves. */
export function assertServedModel(requested: string | undefined, served: string): void {
  if (requested !== undefined && requested !== served) throw new ModelNotFoundError(requested);
}
