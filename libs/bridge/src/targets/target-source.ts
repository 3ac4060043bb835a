import { Target } from './target';

/** A set of targets that may change while the bridge runs (a file, a DNS name, a fixed list). */
export interface TargetSource {
  /** Loads the first set; rejects with TargetSpecError when it is invalid. */
  start(onChange: () => void): Promise<void>;
  current(): readonly Target[];
  stop(): void;
}

export class StaticTargetSource implements TargetSource {
  constructor(private readonly targets: readonly Target[]) {}

  start(): Promise<void> {
    return Promise.resolve();
  }

  current(): readonly Target[] {
    return this.targets;
  }

  stop(): void {}
}
