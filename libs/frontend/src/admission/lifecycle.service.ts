import { Injectable } from '@nestjs/common';

/** Process-wide serving state: set when a shutdown starts so readiness fails at once. */
@Injectable()
export class LifecycleService {
  private drainingSince: number | null = null;

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }
}
