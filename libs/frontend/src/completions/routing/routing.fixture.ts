import { FrontendConfig, FrontendConfigValues } from '../../config/frontend-config';
import { ThresholdsService } from '../../thresholds/thresholds.service';
import { TtftPredictor } from '../../ttft-prediction/ttft-predictor.service';
import { OutlierEjection } from '../../worker-monitor/outlier-ejection';
import { WorkerRegistry } from '../../worker-monitor/worker-registry.service';
import { WorkerTraffic } from './worker-traffic';
import { reportFor } from '../../worker-monitor/report.fixture';

export const M = 'm';

/** The router's collaborators, real, for the unit specs of its parts. */
export interface RoutingFixture {
  readonly config: FrontendConfig;
  readonly thresholds: ThresholdsService;
  readonly registry: WorkerRegistry;
  readonly traffic: WorkerTraffic;
  readonly predictor: TtftPredictor;
  /** Outlier ejection over the registry, its counter a no-op. */
  readonly ejection: OutlierEjection;
  /** A worker of model `m` stepping 100 tokens, with `used` of 100 KV blocks (busy above 90). */
  report(id: string, used?: number): void;
}

/** Token-capacity, decode threshold 0.9, router queue at 1 × max_num_batched_tokens. */
export function routingFixture(over: FrontendConfigValues = {}): RoutingFixture {
  const config = new FrontendConfig({
    admissionControl: 'token-capacity',
    thresholds: {
      activeDecodeBlocks: 0.9,
      activePrefillTokens: null,
      activePrefillTokensFrac: null,
    },
    routerQueueThreshold: 1,
    routerQueueMaxDepth: 2,
    routerQueueTimeoutMs: 5000,
    ...over,
  });
  const thresholds = new ThresholdsService(config);
  const registry = new WorkerRegistry(config, thresholds);
  const report = (id: string, used = 0): void => reportFor(registry, M, id, used);
  const traffic = new WorkerTraffic();
  const ejection = new OutlierEjection(config, registry, { inc: () => undefined } as never);
  const predictor = new TtftPredictor(registry);
  return { config, thresholds, registry, traffic, predictor, ejection, report };
}
