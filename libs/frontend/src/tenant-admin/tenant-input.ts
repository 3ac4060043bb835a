import { BadRequestException } from '@nestjs/common';
import { PRIORITY_CLASSES } from '../config/priority';
import { TenantSettings } from '../thresholds/persistence';
import { TENANT_ID } from '../tenants/tenant-directory.service';

const KEYS = [
  'weight',
  'requests_per_minute',
  'tokens_per_minute',
  'max_concurrency',
  'priority',
  'reason',
] as const;
const MAX_WEIGHT = 1_000_000;
const MAX_REASON = 512;

/** A tenant id in the path, or a 400 naming it. */
export function tenantId(raw: string): string {
  if (!TENANT_ID.test(raw)) {
    throw new BadRequestException([
      `tenant id must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`,
    ]);
  }
  return raw;
}

function limit(body: Record<string, unknown>, key: string, errors: string[]): number | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    errors.push(`${key} must be an integer >= 1 or null`);
    return null;
  }
  return v;
}

/** The optional `reason`, or a 400. */
export function reasonOf(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string' || raw.length > MAX_REASON) {
    throw new BadRequestException([`reason must be a string of at most ${MAX_REASON} characters`]);
  }
  return raw;
}

/** The body of `PUT /tenants/{id}` checked whole: every violation named, or the settings. */
export function parsePutTenant(body: unknown): { settings: TenantSettings; reason: string | null } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestException(['body must be a JSON object']);
  }
  const b = body as Record<string, unknown>;
  const errors = Object.keys(b)
    .filter((k) => !(KEYS as readonly string[]).includes(k))
    .map((k) => `property ${k} should not exist`);
  let weight = 1;
  if (b.weight !== undefined) {
    if (
      typeof b.weight !== 'number' ||
      !Number.isFinite(b.weight) ||
      b.weight <= 0 ||
      b.weight > MAX_WEIGHT
    ) {
      errors.push(`weight must be a number > 0 and <= ${MAX_WEIGHT}`);
    } else weight = b.weight;
  }
  const settings: TenantSettings = {
    weight,
    requestsPerMinute: limit(b, 'requests_per_minute', errors),
    tokensPerMinute: limit(b, 'tokens_per_minute', errors),
    maxConcurrency: limit(b, 'max_concurrency', errors),
    priority: null,
  };
  if (b.priority !== undefined && b.priority !== null) {
    if (!(PRIORITY_CLASSES as readonly unknown[]).includes(b.priority)) {
      errors.push(`priority must be one of ${PRIORITY_CLASSES.join(', ')} or null`);
    } else settings.priority = b.priority as string;
  }
  if (typeof settings.maxConcurrency === 'number' && settings.maxConcurrency > 2 ** 31 - 1) {
    errors.push('max_concurrency must be at most 2147483647');
  }
  let reason: string | null = null;
  try {
    reason = reasonOf(b.reason);
  } catch {
    errors.push(`reason must be a string of at most ${MAX_REASON} characters`);
  }
  if (errors.length > 0) throw new BadRequestException(errors);
  return { settings, reason };
}

/** `limit` of a page: 1 … 1000, default `fallback`. */
export function pageLimit(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 1000) {
    throw new BadRequestException(['limit must be an integer from 1 to 1000']);
  }
  return n;
}

/** An audit cursor (`before`): a decimal id. */
export function auditCursor(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9]\d{0,17}$/.test(raw)) {
    throw new BadRequestException(['before must be the next value of a previous page']);
  }
  return raw;
}

/** `window` of a usage read: `<n>m` or `<n>h`, 1 minute to 1 hour; default 1h. */
export function windowMinutes(raw: string | undefined): number {
  if (raw === undefined) return 60;
  const m = /^([1-9]\d{0,3})([mh])$/.exec(raw);
  const minutes = m ? Number(m[1]) * (m[2] === 'h' ? 60 : 1) : NaN;
  if (!(minutes >= 1 && minutes <= 60)) {
    throw new BadRequestException(['window must be <n>m or <n>h, from 1m to 1h']);
  }
  return minutes;
}
