import { hostname, networkInterfaces } from 'node:os';

const WILDCARDS = new Set(['0.0.0.0', '::']);
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
/** Endpoints whose verdict is remembered; past this the memo starts again (a churning fleet). */
const MEMO_LIMIT = 16384;

function normalHost(host: string): string {
  return host.toLowerCase().replace(/^\[|\]$/g, '');
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The frontend's own listen address, to refuse load reports whose endpoint is the frontend
 * itself (proxying to it would loop). A host counts as ours when the frontend listens on it: any
 * loopback or local interface address for a wildcard listen address, the loopback names and
 * `0.0.0.0` (which connects to loopback) for a loopback one, else exactly the configured host.
 * Names that only DNS maps to us are left to the hop header.
 *
 * Every load report asks, and a fleet's endpoints hardly change, so each endpoint's verdict is
 * remembered for as long as the port stays the same (parsing a URL per report was a fifth of
 * the monitor's time at 25,000 reports/s).
 */
export class OwnAddress {
  private readonly hosts: ReadonlySet<string>;
  private readonly anyLoopback: boolean;
  private readonly verdicts = new Map<string, boolean>();
  private verdictsPort = -1;

  constructor(
    listenHost: string,
    /** The port actually listened on (known once listening; until then the configured one). */
    private readonly port: () => number,
  ) {
    const host = normalHost(listenHost);
    const hosts = new Set([host]);
    this.anyLoopback = WILDCARDS.has(host);
    if (this.anyLoopback || isLoopback(host)) {
      for (const h of [...LOOPBACK_NAMES, ...WILDCARDS]) hosts.add(h);
    }
    if (this.anyLoopback) {
      hosts.add(hostname().toLowerCase());
      for (const list of Object.values(networkInterfaces())) {
        for (const a of list ?? []) hosts.add(normalHost(a.address));
      }
    }
    this.hosts = hosts;
  }

  /** True when `endpoint` (a worker's base URL) reaches this frontend's listener. */
  is(endpoint: string): boolean {
    const port = this.port();
    if (port !== this.verdictsPort) {
      this.verdicts.clear();
      this.verdictsPort = port;
    }
    let verdict = this.verdicts.get(endpoint);
    if (verdict === undefined) {
      verdict = this.judge(endpoint, port);
      if (this.verdicts.size >= MEMO_LIMIT) this.verdicts.clear();
      this.verdicts.set(endpoint, verdict);
    }
    return verdict;
  }

  private judge(endpoint: string, ownPort: number): boolean {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      return false;
    }
    const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    if (port !== ownPort) return false;
    const host = normalHost(url.hostname);
    return this.hosts.has(host) || (this.anyLoopback && isLoopback(host));
  }
}
