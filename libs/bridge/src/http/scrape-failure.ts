/** How one scrape ended, as counted in `sluice_bridge_scrapes_total{result}`. */
export type ScrapeResult = 'ok' | 'error' | 'timeout' | 'unparsable';
export const SCRAPE_RESULTS: readonly ScrapeResult[] = ['ok', 'error', 'timeout', 'unparsable'];

/** A scrape that produced no report, and why. */
export class ScrapeFailure extends Error {
  constructor(
    readonly result: Exclude<ScrapeResult, 'ok'>,
    message: string,
  ) {
    super(message);
    this.name = 'ScrapeFailure';
  }
}
