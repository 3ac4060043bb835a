/** A request whose worst case (prompt + max tokens) exceeds the whole KV cache would wait forever. */
export class SequenceTooLargeError extends Error {
  constructor(
    readonly neededBlocks: number,
    readonly totalBlocks: number,
  ) {
    super(
      `request needs up to ${neededBlocks} KV blocks (prompt + max tokens) ` +
        `but a rank holds only ${totalBlocks}`,
    );
    this.name = 'SequenceTooLargeError';
  }
}

/** The engine is shutting down; in-flight sequences are aborted with this error. */
export class EngineClosedError extends Error {
  constructor() {
    super('the worker is shutting down');
    this.name = 'EngineClosedError';
  }
}
