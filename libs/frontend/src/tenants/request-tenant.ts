import { DEFAULT_TENANT } from './tenant-directory.service';

/** Whom a request is charged to and its tenant's `weight`, for the router queue's fair share. */
export interface RequestTenant {
  readonly id: string;
  readonly weight: number;
}

const TENANT = Symbol('sluice.tenant');

/** A request admission has not seen: the default tenant with the default weight. */
export const UNSEEN_TENANT: RequestTenant = { id: DEFAULT_TENANT, weight: 1 };

/** Kept beside the request by admission, like its class (`setRequestPriority`). */
export function setRequestTenant(req: object, tenant: RequestTenant): void {
  (req as { [TENANT]?: RequestTenant })[TENANT] = tenant;
}

export function requestTenant(req: object): RequestTenant {
  return (req as { [TENANT]?: RequestTenant })[TENANT] ?? UNSEEN_TENANT;
}
