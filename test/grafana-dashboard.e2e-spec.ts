import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kvReport } from '@sluice/testkit';
import { MODEL } from './support/bus';
import { createTestDatabase, TestDatabase } from './support/database';
import { useSystem } from './support/fixtures';
import { chat, metricValue, openStream, post } from './support/http';
import { spawnApp, waitFor } from './support/processes';
import { CONTRACT_METRICS } from './support/contract-metrics';

/**
 * deploy/grafana/sluice-dashboard.json and deploy/prometheus/alerts.yml query metrics by name; a
 * renamed or missing metric leaves a panel empty or an alert silent without any error. This test
 * reads every query of both and checks each metric name against the /metrics of a real frontend
 * that has seen a load report, an admitted, a queued and a rejected request, and with a TTFT
 * objective a refused and a sampled one.
 */

const ROOT = join(__dirname, '..');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'sluice-dashboard.json');
const ALERTS = join(ROOT, 'deploy', 'prometheus', 'alerts.yml');

/** Series that Prometheus itself (`up`) or the blackbox exporter's /health probe produce. */
const NOT_FROM_FRONTEND = new Set(['up', 'probe_success']);

/**
 * Beyond docs/metrics.md: the input of the waiting-requests threshold (docs/architecture.md#busy-rule), per rank; the
 * rejections by priority class, what shadow mode would have refused and how often workers flip
 * (docs/operations.md#ttft-objective); the TTFT objective's refusals, prediction error and sample (docs/operations.md#ttft-objective).
 */
const EXTRA_METRICS = [
  'sluice_frontend_worker_requests_waiting',
  'sluice_frontend_rejection_total',
  'sluice_frontend_would_reject_total',
  'sluice_frontend_worker_busy_transitions_total',
  'sluice_frontend_slo_rejection_total',
  'sluice_frontend_ttft_prediction_error_seconds_bucket',
  'sluice_frontend_slo_sample_total',
];

const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/** Metric names a PromQL expression selects (functions, keywords and label names left out). */
function promqlMetricNames(expr: string): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(/__name__\s*=~?\s*"([^"]*)"/g)) {
    for (const n of m[1].split('|')) if (/^[a-zA-Z_:][\w:]*$/.test(n)) names.add(n);
  }
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/#.*$/gm, '')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  // An identifier not preceded by a digit, `.` or `$` (durations, numbers, Grafana variables)
  // and not followed by `(` (a function).
  for (const m of bare.matchAll(/(?<![\w:.$])([a-zA-Z_:][\w:]*)(?![\w:]|\s*\()/g)) {
    if (!PROMQL_WORDS.has(m[1])) names.add(m[1]);
  }
  return [...names];
}

interface Target {
  expr?: string;
  datasource?: { uid?: string };
}
interface Panel {
  title?: string;
  type: string;
  datasource?: { uid?: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { type: string; query?: string | { query?: string } }[] };
}

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

/** Every PromQL the dashboard runs: panel targets and `label_values(<selector>, label)` variables. */
function dashboardQueries(dashboard: Dashboard): string[] {
  const exprs = allPanels(dashboard.panels).flatMap((p) =>
    (p.targets ?? []).flatMap((t) => (t.expr ? [t.expr] : [])),
  );
  for (const v of dashboard.templating.list) {
    if (v.type !== 'query') continue;
    const query = typeof v.query === 'string' ? v.query : (v.query?.query ?? '');
    const m =
      /^\s*label_values\((.+),\s*\w+\s*\)\s*$/.exec(query) ??
      /^\s*query_result\((.+)\)\s*$/.exec(query);
    if (m) exprs.push(m[1]);
  }
  return exprs;
}

/** The `expr:` of every rule in a Prometheus rule file: single-line or a `|` / `>` block. */
function ruleExpressions(yaml: string): string[] {
  const lines = yaml.split('\n');
  const indentOf = (line: string): number => line.length - line.trimStart().length;
  const exprs: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)(?:- )?expr:\s*(.*)$/.exec(lines[i]);
    if (!m) continue;
    const value = m[2].trim();
    if (!/^[|>][-+]?$/.test(value)) {
      exprs.push(value.replace(/^(['"])(.*)\1$/, '$2'));
      continue;
    }
    const block: string[] = [];
    while (i + 1 < lines.length && (!lines[i + 1].trim() || indentOf(lines[i + 1]) > m[1].length)) {
      block.push(lines[++i]);
    }
    exprs.push(block.join('\n'));
  }
  return exprs;
}

/** Metric names that have at least one sample line (not just HELP/TYPE) in Prometheus text. */
function sampleNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)[{ ]/.exec(line);
    if (m) names.add(m[1]);
  }
  return names;
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
const alertsYaml = readFileSync(ALERTS, 'utf8');
const dashboardMetrics = [...new Set(dashboardQueries(dashboard).flatMap(promqlMetricNames))];
const alertMetrics = [...new Set(ruleExpressions(alertsYaml).flatMap(promqlMetricNames))];

describe('metric names used by the Grafana dashboard and the alert rules', () => {
  it('are read from PromQL without functions, keywords, labels or variables', () => {
    expect(
      promqlMetricNames(
        'sum by (model, le) (rate(a_bucket{model=~"$model",x="b_total"}[$__rate_interval])) / ' +
          'on(instance) group_left(job) max(b_total offset 5m) > bool 1e-9 and {__name__=~"c|d"}',
      ).sort(),
    ).toEqual(['a_bucket', 'b_total', 'c', 'd']);
    expect(
      ruleExpressions(
        '- alert: A\n  expr: up == 0\n- alert: B\n  expr: |\n    x\n    / y\n  for: 1m\n',
      ),
    ).toEqual(['up == 0', '    x\n    / y']);
  });

  it('cover every query of the dashboard and every alert rule', () => {
    const panelsWithQueries = allPanels(dashboard.panels).filter((p) => p.targets?.length);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(panelsWithQueries.length).toBeGreaterThanOrEqual(10);
    // Every panel and query reads the data source variable, so the dashboard imports anywhere.
    for (const p of panelsWithQueries) {
      expect({ panel: p.title, uid: p.datasource?.uid }).toEqual({
        panel: p.title,
        uid: '${datasource}',
      });
      for (const t of p.targets ?? []) expect(t.datasource?.uid).toBe('${datasource}');
    }
    expect(ruleExpressions(alertsYaml)).toHaveLength(
      alertsYaml.match(/^\s*- alert:/gm)?.length ?? 0,
    );
  });

  it('include every metric of docs/metrics.md in the dashboard', () => {
    const base = (name: string): string => name.replace(/_(bucket|sum|count)$/, '');
    const shown = new Set(dashboardMetrics.map(base));
    expect(CONTRACT_METRICS.filter((name) => !shown.has(name))).toEqual([]);
  });

  it('include the per-rank requests-waiting gauge and the admission controls’ counters', () => {
    expect(EXTRA_METRICS.filter((name) => !dashboardMetrics.includes(name))).toEqual([]);
  });
});

describe('a running frontend exports every metric the dashboard and the alerts query', () => {
  const BUSY_MODEL = 'test/always-busy';
  /** Busy too, but in shadow mode: admitted, and counted as a would-be rejection. */
  const SHADOW_MODEL = 'test/shadow-busy';
  let db: TestDatabase;
  beforeAll(async () => {
    // PostgreSQL migrated by the migrate app, as the container entry point does.
    db = await createTestDatabase('dashboard');
    const migrate = spawnApp('migrate', ['run'], { env: { SLUICE_DATABASE_URL: db.url() } });
    expect(await migrate.exited).toBe(0);
  });
  afterAll(() => db?.drop());
  // Real timing (speedup 1), so a request is still in flight when the next ones arrive.
  const sys = useSystem({
    bus: true,
    workers: [['--speedup', '1']],
    frontend: () => [
      ...['--database-url', db.url()],
      ...['--admission-control', 'token-capacity', '--active-decode-blocks-threshold', '0.5'],
      // Queue a request while the worker has any prompt token in flight from this frontend.
      ...['--router-queue-threshold', '0'],
      // Under a TTFT objective, admit about half of the would-be refusals as samples.
      ...['--ttft-slo-sample', '0.5'],
    ],
  });

  it('after a load report, an invalid report, admitted, queued, rejected and shadow requests, and under a TTFT objective refused and sampled ones', async () => {
    // Sent again on every try: a report published before the monitor's subscription reached
    // NATS is lost (the frontend is healthy once connected, a moment before it subscribes).
    const publish = async (): Promise<void> => {
      // With num_requests_waiting, which the contract leaves optional: its gauge has a series.
      sys.bus.raw(sys.fe.namespace, 'kv_metrics', {
        ...kvReport({
          worker_id: 'w-free',
          endpoint: sys.worker.url,
          active_decode_blocks: 0,
          kv_total_blocks: 100,
          active_prefill_tokens: 0,
          max_num_batched_tokens: 8192,
        }),
        num_requests_waiting: 0,
      });
      sys.bus.report(sys.fe.namespace, {
        worker_id: 'w-busy',
        model: BUSY_MODEL,
        endpoint: 'http://127.0.0.1:9',
        active_decode_blocks: 90,
        kv_total_blocks: 100,
      });
      sys.bus.report(sys.fe.namespace, {
        worker_id: 'w-shadow',
        model: SHADOW_MODEL,
        endpoint: 'http://127.0.0.1:9',
        active_decode_blocks: 90,
        kv_total_blocks: 100,
      });
      sys.bus.raw(sys.fe.namespace, 'kv_metrics', new TextEncoder().encode('{"worker_id": '));
      await sys.bus.flush();
    };
    await waitFor(async () => {
      await publish();
      const text = await (await fetch(`${sys.fe.url}/v1/models`)).text();
      return text.includes(MODEL) && text.includes(BUSY_MODEL) && text.includes(SHADOW_MODEL);
    }, 'the models listed');

    expect((await chat(sys.fe.url, { model: BUSY_MODEL })).status).toBe(503);
    const shadow = await post(`${sys.fe.url}/busy_threshold`, {
      model: SHADOW_MODEL,
      admission_control: 'shadow',
    });
    expect(shadow.status).toBe(200);
    // Admitted, then refused by its worker's address (nothing listens there): the contract's 502,
    // not the overload 503.
    expect((await chat(sys.fe.url, { model: SHADOW_MODEL })).status).toBe(502);
    const admitted = await Promise.all([1, 2, 3].map(() => chat(sys.fe.url, { max_tokens: 16 })));
    expect(admitted.map((a) => a.status)).toEqual([200, 200, 200]);

    // A TTFT objective of 1 ms, which no worker meets. Three streamed requests at once: the first
    // is explored on the idle worker (docs/operations.md, "TTFT objective"); while it is in
    // flight the others are refused (an objective refusal) or, by the sample's draw, admitted as
    // samples that miss it. Every admitted one adds its prediction error. Until a refusal and a
    // sample have happened; the reports keep the worker alive.
    const objective = await post(`${sys.fe.url}/busy_threshold`, { model: MODEL, ttft_slo_ms: 1 });
    expect(objective.status).toBe(200);
    const counted = async (name: string, labels: Record<string, string>): Promise<number> =>
      (await metricValue(sys.fe.url, name, { model: MODEL, ...labels })) ?? 0;
    const statuses = new Set<number>();
    let admittedUnderObjective = 0;
    await waitFor(
      async () => {
        await publish();
        const all = await Promise.all([1, 2, 3].map(() => openStream(sys.fe.url, 2)));
        for (const res of all) {
          await res.text();
          statuses.add(res.status);
          if (res.status === 200) admittedUnderObjective++;
        }
        const refused = await counted('sluice_frontend_slo_rejection_total', {
          priority: 'standard',
        });
        const sampled = await counted('sluice_frontend_slo_sample_total', { outcome: 'missed' });
        return refused > 0 && sampled > 0;
      },
      'an objective refusal and a sampled would-be refusal',
      60_000,
    );
    expect([...statuses].sort()).toEqual([200, 503]);
    expect(await counted('sluice_frontend_ttft_prediction_error_seconds_count', {})).toBe(
      admittedUnderObjective,
    );

    const exported = sampleNames(await (await fetch(`${sys.fe.url}/metrics`)).text());
    const missing = (names: string[]): string[] =>
      names.filter((name) => !NOT_FROM_FRONTEND.has(name) && !exported.has(name));
    expect(dashboardMetrics.length).toBeGreaterThanOrEqual(CONTRACT_METRICS.length);
    expect({ dashboard: missing(dashboardMetrics), alerts: missing(alertMetrics) }).toEqual({
      dashboard: [],
      alerts: [],
    });
  });
});
