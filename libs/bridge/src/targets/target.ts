import { isHeaderValue, redactCredentials, REPORT_LIMITS } from '@sluice/contracts';
import { isIP } from 'node:net';

/** One engine to scrape: its worker id in reports and the base URL of its API. */
export interface Target {
  readonly workerId: string;
  readonly url: string;
}

/** A `[NAME=]URL`, targets-file line or `NAME:PORT` that cannot be used. */
export class TargetSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetSpecError';
  }
}

const NAMED = /^([A-Za-z0-9][A-Za-z0-9._:@-]*)=(.+)$/;
const MAX_TARGETS_PER_FILE = 10_000;

/** `[NAME=]URL`: the worker id is NAME, else the URL's `host:port`. */
export function parseTargetSpec(spec: string): Target {
  const trimmed = spec.trim();
  const named = NAMED.exec(trimmed);
  const rawUrl = named ? named[2] : trimmed;
  if (!/^https?:\/\//i.test(rawUrl) || !URL.canParse(rawUrl)) {
    // Printed at boot and logged on a reload: never with the password the text may hold.
    throw new TargetSpecError(`'${redactCredentials(rawUrl.slice(0, 200))}' is not an http(s) URL`);
  }
  const url = new URL(rawUrl);
  if (url.search || url.hash || url.username || url.password) {
    // Named without its user-info: the error is printed, and a password must not be.
    url.username = url.password = '';
    throw new TargetSpecError(
      `'${url.toString().slice(0, 200)}': a base URL has no query, fragment or credentials`,
    );
  }
  const workerId = named ? named[1] : hostPort(url);
  if (workerId.length > REPORT_LIMITS.maxIdLength || !isHeaderValue(workerId)) {
    throw new TargetSpecError(`worker id '${workerId.slice(0, 80)}' is too long or not printable`);
  }
  const base = url.toString().replace(/\/+$/, '');
  if (base.length > REPORT_LIMITS.maxEndpointLength) throw new TargetSpecError('URL too long');
  return { workerId, url: base };
}

/** One `[NAME=]URL` a line; `#` starts a comment; blank lines are skipped. */
export function parseTargetsFile(text: string): { targets: Target[]; errors: string[] } {
  const targets: Target[] = [];
  const errors: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/#.*$/, '').trim();
    if (line === '') continue;
    try {
      targets.push(parseTargetSpec(line));
    } catch (err) {
      errors.push(`line ${i + 1}: ${(err as Error).message}`);
    }
    if (targets.length > MAX_TARGETS_PER_FILE) {
      errors.push(`more than ${MAX_TARGETS_PER_FILE} targets`);
      break;
    }
  }
  return { targets, errors };
}

export interface DnsTargetSpec {
  readonly name: string;
  readonly port: number;
}

/** `NAME:PORT`, e.g. `vllm-headless.default.svc.cluster.local:8000`. */
export function parseDnsTarget(spec: string): DnsTargetSpec {
  const m = /^([A-Za-z0-9]([A-Za-z0-9.-]{0,252})?):(\d{1,5})$/.exec(spec.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < 1 || port > 65535) {
    throw new TargetSpecError(`'${spec.slice(0, 200)}' is not NAME:PORT`);
  }
  return { name: m[1], port };
}

/** The target for one address a DNS name resolved to. */
export function targetForAddress(address: string, port: number): Target {
  const host = isIP(address) === 6 ? `[${address}]` : address;
  return { workerId: `${host}:${port}`, url: `http://${host}:${port}` };
}

function hostPort(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.hostname}:${port}`;
}
