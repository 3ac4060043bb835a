import { Injectable } from '@nestjs/common';
import { FrontendConfig } from '../config/frontend-config';
import { isLowerPriority, PriorityClass } from '../config/priority';
import { FrontendError, withoutStack } from '../errors/frontend.error';
import { InvalidApiKeyError } from './errors/tenant.errors';
import { DEFAULT_TENANT, TENANT_ID, TenantDirectory } from './tenant-directory.service';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** The trusted tenant header holds something that cannot be a tenant id: 400. */
export class InvalidTenantHeaderError extends FrontendError {
  readonly status = 400;
  readonly type = 'invalid_request_error';
  readonly errorType = 'validation';

  constructor(header: string) {
    super(
      `Invalid ${header} header: expected a tenant id (letters, digits, '.', '_', '-'; 1 to 64)`,
    );
    this.name = 'InvalidTenantHeaderError';
  }
}

/** The token of `Authorization: Bearer <key>`, if the header has that form. */
export function bearerKey(headers: Headers): string | undefined {
  const raw = headers.authorization;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value.length < 8 || !/^Bearer\s/i.test(value)) return undefined;
  const key = value.slice(7).trim();
  return key === '' ? undefined : key;
}

/**
 * Who a request is charged to (docs/api.md#tenants): the tenant holding its bearer key; else the
 * tenant the trusted header (`--tenant-header`) names; else `default`, or with
 * `--require-tenant` a 401.
 */
@Injectable()
export class TenantIdentity {
  private readonly header: string | null;
  private readonly required: boolean;

  constructor(
    config: FrontendConfig,
    private readonly directory: TenantDirectory,
  ) {
    this.header = config.tenantHeader;
    this.required = config.requireTenant;
  }

  /** The tenant's id; throws the 401 or the 400 of an invalid header. */
  tenantOf(headers: Headers): string {
    const found = this.find(headers);
    if (found === null) throw withoutStack(() => new InvalidApiKeyError());
    if (found instanceof Error) throw found;
    return found;
  }

  /** Whether the request will be answered 401 or 400 here (the early refusal paths let it by). */
  refuses(headers: Headers): boolean {
    if (!this.required && this.header === null) return false;
    const found = this.find(headers);
    return found === null || found instanceof Error;
  }

  /**
   * The tenant a refusal of the early paths is counted for: they let by only requests
   * `refuses` does not, so this is the tenant the guard would have found. A header read and a
   * map lookup (a key's digest is remembered by the directory); undefined if none.
   */
  chargedTo(headers: Headers): string | undefined {
    const found = this.find(headers);
    return typeof found === 'string' ? found : undefined;
  }

  /** The class the request is served as: at most the tenant's `priority`. */
  capped(tenant: string, claimed: PriorityClass): PriorityClass {
    const cap = this.directory.get(tenant)?.priority as PriorityClass | null | undefined;
    return cap && isLowerPriority(cap, claimed) ? cap : claimed;
  }

  /** The tenant's `weight` for the fair share of the router queue: 1 unless stored. */
  weightOf(tenant: string): number {
    return this.directory.get(tenant)?.weight ?? 1;
  }

  private find(headers: Headers): string | null | Error {
    const key = bearerKey(headers);
    const byKey = key === undefined ? undefined : this.directory.tenantOfKey(key);
    if (byKey !== undefined) return byKey;
    if (this.header !== null) {
      const named = headers[this.header];
      if (named !== undefined) {
        if (typeof named !== 'string' || !TENANT_ID.test(named)) {
          return withoutStack(() => new InvalidTenantHeaderError(this.header as string));
        }
        return named;
      }
    }
    return this.required ? null : DEFAULT_TENANT;
  }
}
