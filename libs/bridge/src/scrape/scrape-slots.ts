/**
 * How many scrapes of one bridge may have requests in flight at once. The rest wait their turn,
 * first come first served, before their request is sent and their deadline armed: answers then
 * never queue behind more work than the bridge can read in time, so a bridge short of CPU makes
 * its scrapes less frequent instead of timing out healthy engines.
 */
export class ScrapeSlots {
  private free: number;
  private readonly waiting: Array<(granted: boolean) => void> = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** A turn: `granted` resolves true with a slot (release it), or false once cancelled. */
  take(): { readonly granted: Promise<boolean>; readonly cancel: () => void } {
    if (this.free > 0) {
      this.free--;
      return { granted: Promise.resolve(true), cancel: () => undefined };
    }
    let wake: (granted: boolean) => void = () => undefined;
    const granted = new Promise<boolean>((resolve) => (wake = resolve));
    this.waiting.push(wake);
    return {
      granted,
      cancel: () => {
        const i = this.waiting.indexOf(wake);
        if (i !== -1) {
          this.waiting.splice(i, 1);
          wake(false);
        }
      },
    };
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next(true);
    else this.free++;
  }

  /** Scrapes waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }
}
