import { RequestTenant } from '../../tenants/request-tenant';
import { PriorityClass } from '../../config/priority';
import { EndpointLabel } from '../../metrics/metric-names';
import { ModelEntry } from '../../worker-monitor/worker-entry';

/** A request to route: what the router, its queue and the TTFT objective read of it. */
export interface Ask {
  readonly model: ModelEntry;
  readonly promptTokens: number;
  readonly maxTokens: number;
  readonly priority: PriorityClass;
  readonly endpoint: EndpointLabel;
  /** Whom it is charged to and the tenant's weight (absent: the default tenant, weight 1). */
  readonly tenant?: RequestTenant;
}
