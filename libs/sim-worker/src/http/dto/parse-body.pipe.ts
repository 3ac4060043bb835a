import { PipeTransform } from '@nestjs/common';

/** Applies one of the request parsers to `@Body()`; parsers throw `InvalidRequestError`. */
export class ParseBodyPipe<T> implements PipeTransform<unknown, T> {
  constructor(private readonly parse: (body: unknown) => T) {}

  transform(value: unknown): T {
    return this.parse(value);
  }
}
