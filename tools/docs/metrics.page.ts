import { Test } from '@nestjs/testing';
import { EngineBridge } from '@sluice/bridge';
import { InProcessBus } from '@sluice/bus';
import { FrontendConfig, FrontendModule, PRIORITY_CLASSES } from '@sluice/frontend';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Histogram, Metric, register, Registry } from 'prom-client';
import { SCRAPE_RESULTS } from '../../libs/bridge/src/http/scrape-failure';
import { ENDPOINT_LABELS } from '../../libs/frontend/src/metrics/metric-names';
import { MonitorService } from '../../libs/frontend/src/worker-monitor/monitor.service';
import { WorkerGaugesRenderer } from '../../libs/frontend/src/worker-monitor/worker-gauges.renderer';
import { GENERATED_NOTE } from './generated-note';

/** One metric family as a process exports it. */
export interface MetricFamily {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly labels: readonly string[];
  /** Upper bounds of a histogram's buckets. */
  readonly buckets?: readonly number[];
}

export interface MetricFamilies {
  readonly frontend: MetricFamily[];
  /** prom-client's default process and Node.js metrics, which every process exports. */
  readonly runtime: string[];
  readonly bridge: MetricFamily[];
}

const isRuntime = (name: string): boolean => /^(process|nodejs)_/.test(name);

type Registered = ReturnType<Registry['getMetricsAsArray']>[number];

async function familyOf(registered: Registered): Promise<MetricFamily> {
  // The registry holds the metric objects themselves, with their declaration's options; its
  // typings show only part of them.
  const metric = registered as unknown as Metric & {
    labelNames?: string[];
    upperBounds?: number[];
  };
  const { name, help, type } = await metric.get();
  const buckets = metric instanceof Histogram ? metric.upperBounds : undefined;
  return {
    name,
    type: String(type),
    help,
    labels: metric.labelNames ?? [],
    ...(buckets && { buckets }),
  };
}

/**
 * The frontend's families as its module graph registers them, and the per-worker gauges as its
 * renderer writes them after one load report (they are not prom-client metrics). Building the
 * module instantiates every provider, metrics included, and touches no database or network.
 */
async function frontendFamilies(): Promise<{ frontend: MetricFamily[]; runtime: string[] }> {
  register.clear();
  const config = new FrontendConfig();
  const module = await Test.createTestingModule({
    imports: [FrontendModule.forRoot(config, [], new InProcessBus())],
  }).compile();
  try {
    const metrics = register.getMetricsAsArray();
    const families = await Promise.all(
      metrics.filter((m) => !isRuntime(m.name)).map((m) => familyOf(m)),
    );
    module.get(MonitorService).onKvMetrics({
      worker_id: 'w-1',
      model: 'm',
      endpoint: 'http://127.0.0.1:9',
      active_decode_blocks: 1,
      kv_total_blocks: 2,
      active_prefill_tokens: 3,
      num_requests_waiting: 4,
    });
    const text = Buffer.concat(await module.get(WorkerGaugesRenderer).render()).toString();
    for (const f of parsePrometheusTextFormat(text)) {
      const labels = Object.keys(f.metrics[0]?.labels ?? {});
      families.push({ name: f.name, type: f.type.toLowerCase(), help: f.help, labels });
    }
    const runtime = metrics.filter((m) => isRuntime(m.name)).map((m) => m.name);
    return { frontend: families, runtime };
  } finally {
    await module.close();
    register.clear();
  }
}

/** The standalone bridge's own families, registered as its app registers them. */
async function bridgeFamilies(): Promise<MetricFamily[]> {
  const registry = new Registry();
  const bridge = new EngineBridge({
    engine: 'vllm',
    namespace: 'dynamo',
    targets: [],
    publisher: { publish: () => undefined },
    registry,
  });
  await bridge.stop();
  return Promise.all(registry.getMetricsAsArray().map((m) => familyOf(m)));
}

export async function metricFamilies(): Promise<MetricFamilies> {
  return { ...(await frontendFamilies()), bridge: await bridgeFamilies() };
}

/** What a label holds, for the labels whose values are the same wherever they appear. */
const LABELS: Record<string, string> = {
  model:
    'the model name; from a request body only for a model some worker serves, else `unknown` ' +
    '(so clients cannot grow the series); a forgotten model takes its series along',
  endpoint: ENDPOINT_LABELS.map((e) => `\`${e}\``).join(', '),
  priority: `the class the request was judged as: ${PRIORITY_CLASSES.map((c) => `\`${c}\``).join(', ')}`,
  worker_id: "the worker's id from its load reports; its series go when the worker is forgotten",
  dp_rank: 'the data-parallel rank of the worker, from 0',
  request_type: '`stream`, `unary`',
  status: '`success`, `error`',
  error_type:
    '`""` (success), `overload`, `validation`, `not_found`, `unavailable`, `upstream`, `internal`',
  result: SCRAPE_RESULTS.map((r) => `\`${r}\``).join(', '),
};

const cell = (text: string): string => text.replace(/\|/g, '\\|');
const sentence = (text: string): string => (/[.!?]$/.test(text) ? text : `${text}.`);

function table(families: readonly MetricFamily[]): string {
  const rows = [...families]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((f) => {
      const labels = f.labels.map((l) => `\`${l}\``).join(', ') || '—';
      const buckets = f.buckets ? ` Buckets (s): ${f.buckets.join(', ')}.` : '';
      return `| \`${f.name}\` | ${f.type} | ${labels} | ${sentence(cell(f.help))}${buckets} |`;
    });
  return ['| metric | type | labels | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

function labelList(families: readonly MetricFamily[]): string {
  const used = new Set(families.flatMap((f) => f.labels));
  return Object.entries(LABELS)
    .filter(([label]) => used.has(label))
    .map(([label, meaning]) => `- \`${label}\`: ${meaning}.`)
    .join('\n');
}

/** docs/metrics.md, from the metrics the frontend and the bridge register. */
export function metricsPage(f: MetricFamilies): string {
  return `# Metrics

${GENERATED_NOTE}

Every metric a Sluice process exports in the Prometheus text format, with its type, labels and
meaning. Names starting \`dynamo_frontend_\` are those of NVIDIA Dynamo's frontend, so its
dashboards work unchanged; \`sluice_\` names are Sluice's own. Alerts on these metrics and what to
do about each: docs/operations.md.

## Frontend (\`GET /metrics\`)

Every replica hears every load report, so the per-worker series are the same on every replica
(aggregate them with \`max\`, not \`sum\`); request counters count this replica's requests (\`sum\`
them). With \`--engine-target\`, the bridge's metrics below are served here too.

${table(f.frontend)}

Labels:

${labelList([...f.frontend, ...f.bridge])}

## Engine bridge (\`GET /metrics\` on \`--http-port\`, 9400 by default)

${table(f.bridge)}

## Runtime

Every process also exports prom-client's default process and Node.js metrics:
${f.runtime.map((n) => `\`${n}\``).join(', ')}.
The \`nodejs_eventloop_lag_*\` gauges measure the interval between ticks of a 10 ms timer,
reset at each scrape: an idle process reads about 0.010 s.

The simulated worker exports no Sluice metrics; with \`--metrics-format\` it serves its load in
an engine's own format instead (docs/engines.md).
`;
}
