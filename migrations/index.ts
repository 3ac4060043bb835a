import { CreateThresholdTables1764460800000 } from './1764460800000-CreateThresholdTables';
import { AddWaitingRequestsThreshold1796083200000 } from './1796083200000-AddWaitingRequestsThreshold';
import { AddThresholdChangeSafety1796156400000 } from './1796156400000-AddThresholdChangeSafety';
import { AddAdmissionControl1796157600000 } from './1796157600000-AddAdmissionControl';
import { AddTtftObjective1796158800000 } from './1796158800000-AddTtftObjective';
import { CreateTenantTables1796160000000 } from './1796160000000-CreateTenantTables';

/**
 * Every migration, oldest first. Listed by hand rather than found by a glob so the same list
 * works compiled in dist/ and under jest/swc; a new migration must be added here. The embedded
 * (PGlite) database runs this same list at start.
 */
export const ALL_MIGRATIONS = [
  CreateThresholdTables1764460800000,
  AddWaitingRequestsThreshold1796083200000,
  AddThresholdChangeSafety1796156400000,
  AddAdmissionControl1796157600000,
  AddTtftObjective1796158800000,
  CreateTenantTables1796160000000,
];
