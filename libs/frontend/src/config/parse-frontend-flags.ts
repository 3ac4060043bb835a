import { envName as cliEnvName, flagErrorAs, formatUsage, parseFlags } from '@sluice/cli';
import { FrontendConfig } from './frontend-config';
import { parseAdminTokens } from './admin-tokens';
import { FrontendConfigError } from './frontend-config.error';
import { FRONTEND_FLAGS } from './frontend-flags';
import { mergePriorityFactors } from './priority';
import { readPriorityKeys } from './priority-keys';
import { THRESHOLD_SPECS } from './threshold-keys';

const ENV_PREFIX = 'SLUICE_';

export const FRONTEND_USAGE = formatUsage(
  FRONTEND_FLAGS,
  { synopsis: 'usage: sluice-frontend [--flag value ...]' },
  ENV_PREFIX,
);

export function envName(flag: string): string {
  return cliEnvName(ENV_PREFIX, flag);
}

/** Parses argv (without node and script) and the environment; throws FrontendConfigError. */
export function parseFrontendFlags(argv: string[], env: NodeJS.ProcessEnv = {}): FrontendConfig {
  const { values: v, sourceOf } = parseFlags(FRONTEND_FLAGS, argv, env, {
    envPrefix: ENV_PREFIX,
    error: flagErrorAs(FrontendConfigError),
  });
  const tokenFile = v['admin-token-file'];
  const priorityKeyFile = v['priority-key-file'];
  if (priorityKeyFile !== undefined && v['priority-header'] === null) {
    // The policy caps the class a header claims; with no header every request is standard.
    throw new FrontendConfigError(
      sourceOf('priority-key-file'),
      priorityKeyFile,
      'needs the priority header, but --priority-header is none',
    );
  }
  if (v['eject-backoff-max-ms'] < v['eject-backoff-ms']) {
    throw new FrontendConfigError(
      sourceOf('eject-backoff-max-ms'),
      String(v['eject-backoff-max-ms']),
      `is shorter than --eject-backoff-ms (${v['eject-backoff-ms']})`,
    );
  }
  return new FrontendConfig({
    httpHost: v['http-host'],
    httpPort: v['http-port'],
    thresholds: Object.fromEntries(THRESHOLD_SPECS.map((s) => [s.key, v[s.flag]])),
    ttftSloSample: v['ttft-slo-sample'],
    exploreIntervalMs: v['explore-interval-ms'],
    busyReleaseFactor: v['busy-release-factor'],
    busyMinDwellMs: v['busy-min-dwell-ms'],
    routerMode: v['router-mode'],
    routerQueueThreshold: v['router-queue-threshold'],
    routerQueueMaxDepth: v['router-queue-max-depth'],
    routerQueueTimeoutMs: v['router-queue-timeout-ms'],
    retryAfterSecs: v['retry-after-secs'],
    workerTtlMs: v['worker-ttl-ms'],
    reservationShareIntervalMs: v['reservation-share-interval-ms'],
    reservationShareTtlMs: v['reservation-share-ttl-ms'],
    natsUrl: v['nats-url'],
    databaseUrl: v['database-url'],
    dataDir: v['data-dir'],
    dataDirWaitMs: v['data-dir-wait-ms'],
    adminTokens: parseAdminTokens(
      { source: sourceOf('admin-token'), items: v['admin-token'] },
      tokenFile === undefined
        ? undefined
        : { path: tokenFile, source: sourceOf('admin-token-file') },
    ),
    adminAllowLoopback: v['admin-allow-loopback'],
    engineTargets: v['engine-target'],
    llamacppKvCache: v['llamacpp-kv-cache'],
    thresholdResyncMs: v['threshold-resync-ms'],
    logLevel: v['log-level'],
    accessLog: v['access-log'],
    shutdownTimeoutMs: v['shutdown-timeout-ms'],
    maxInflightPerKey: v['max-inflight-per-key'],
    tenantHeader: v['tenant-header'],
    requireTenant: v['require-tenant'],
    statusPageTenants: v['status-page-tenants'],
    tenantSyncMs: v['tenant-sync-ms'],
    priorityHeader: v['priority-header'],
    priorityFactors: mergePriorityFactors(v['priority-factor']),
    priorityKeys:
      priorityKeyFile === undefined
        ? null
        : readPriorityKeys(priorityKeyFile, sourceOf('priority-key-file')),
    namespace: v.namespace,
    maxWorkers: v['max-workers'],
    maxTrackedRanks: v['max-tracked-ranks'],
    upstreamTimeoutMs: v['upstream-timeout-ms'],
    bodyLimitBytes: v['body-limit-bytes'],
    idleTimeoutMs: v['idle-timeout-ms'],
    maxUpstreamBodyBytes: v['max-upstream-body-bytes'],
    upstreamRetries: v['upstream-retries'],
    ejectAfter: v['eject-after'],
    ejectBackoffMs: v['eject-backoff-ms'],
    ejectBackoffMaxMs: v['eject-backoff-max-ms'],
    maxConnections: v['max-connections'],
    maxModelLen: v['max-model-len'],
  });
}
