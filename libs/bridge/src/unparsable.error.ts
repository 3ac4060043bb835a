/** The engine answered, but not with values a load report can be built from. */
export class UnparsableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnparsableError';
  }
}
