/**
 * A realistic `GET /metrics` body of one vLLM 0.11 API server with one engine core, as the
 * Python client and vLLM's PrometheusStatLogger write it: the process and GC collectors, the
 * HTTP instrumentator's series, vLLM's gauges and counters (with their `_created` samples) and
 * its 14 histograms with vLLM's own buckets. About 45 KB and 530 lines, of which the bridge
 * needs four; what it costs to read the rest is part of what the bridge scenario measures.
 */
export interface VllmMetricsOptions {
  model: string;
  /** `vllm:kv_cache_usage_perc`, 0..1. */
  kvUsage: number;
  numGpuBlocks: number;
  running?: number;
  waiting?: number;
  /** Varies the counters and histograms from engine to engine. */
  seed?: number;
}

const TTFT = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
  160, 640, 2560,
];
const TPOT = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
];
const LATENCY = [
  0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680,
];
/** `build_1_2_5_buckets(max_model_len)` for a 40,960-token model. */
const TOKENS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000];
const ITERATION = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
const PARAMS_N = [1, 2, 5, 10, 20];
const HTTP_HIGHR = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 7.5, 10, 30,
  60,
];
const HANDLERS = ['/v1/chat/completions', '/v1/completions', '/v1/models'];

/** Python's `repr` of a float, as the client writes sample values. */
const py = (x: number): string => (Number.isInteger(x) ? `${x}.0` : String(x));

interface HistogramSeries {
  labels: string;
  n: number;
  mode: number;
}

class Writer {
  private readonly lines: string[] = [];

  constructor(private readonly created: number) {}

  family(name: string, type: string, help: string): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    return this;
  }

  sample(name: string, labels: string, value: number): this {
    this.lines.push(`${name}${labels ? `{${labels}}` : ''} ${py(value)}`);
    return this;
  }

  /** A counter as the Python client writes it: `_total` samples, then a `_created` gauge. */
  counter(name: string, help: string, series: Array<[string, number]>): this {
    this.family(name, 'counter', help);
    for (const [labels, v] of series) this.sample(`${name}_total`, labels, v);
    return this.createdFamily(
      name,
      help,
      series.map(([labels]) => labels),
    );
  }

  /** A histogram, one series per label set, observations spread around bucket `mode`. */
  histogram(name: string, help: string, buckets: number[], series: HistogramSeries[]): this {
    this.family(name, 'histogram', help);
    for (const { labels, n, mode } of series) {
      const sep = labels ? `${labels},` : '';
      let cum = 0;
      let sum = 0;
      buckets.forEach((le, i) => {
        const here = Math.round((n * Math.max(0, 1 - Math.abs(i - mode) / 4)) / 4);
        cum = Math.min(n, cum + here);
        sum += here * le * 0.7;
        this.sample(`${name}_bucket`, `${sep}le="${py(le)}"`, cum);
      });
      this.sample(`${name}_bucket`, `${sep}le="+Inf"`, n);
      this.sample(`${name}_count`, labels, n);
      this.sample(`${name}_sum`, labels, Math.round(sum * 1000) / 1000);
    }
    return this.createdFamily(
      name,
      help,
      series.map((x) => x.labels),
    );
  }

  private createdFamily(name: string, help: string, labelSets: string[]): this {
    this.family(`${name}_created`, 'gauge', help);
    for (const labels of labelSets) this.sample(`${name}_created`, labels, this.created);
    return this;
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

export function vllmMetricsText(o: VllmMetricsOptions): string {
  const seed = o.seed ?? 0;
  const req = 20000 + ((seed * 7919) % 50000);
  const created = 1764590000 + (seed % 3600) + 0.123;
  const l = `model_name="${o.model}",engine="0"`;
  const w = new Writer(created);
  for (const [name, help] of [
    ['python_gc_objects_collected_total', 'Objects collected during gc'],
    ['python_gc_objects_uncollectable_total', 'Uncollectable objects found during GC'],
    ['python_gc_collections_total', 'Number of times this generation was collected'],
  ]) {
    w.family(name, 'counter', help);
    for (const g of [0, 1, 2]) w.sample(name, `generation="${g}"`, 1000 * (3 - g) + seed);
  }
  w.family('python_info', 'gauge', 'Python platform information')
    .sample(
      'python_info',
      'implementation="CPython",major="3",minor="12",patchlevel="11",version="3.12.11"',
      1,
    )
    .family('process_virtual_memory_bytes', 'gauge', 'Virtual memory size in bytes.')
    .sample('process_virtual_memory_bytes', '', 5.3e10)
    .family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.')
    .sample('process_resident_memory_bytes', '', 3.1e9)
    .family(
      'process_start_time_seconds',
      'gauge',
      'Start time of the process since unix epoch in seconds.',
    )
    .sample('process_start_time_seconds', '', Math.floor(created))
    .family(
      'process_cpu_seconds_total',
      'counter',
      'Total user and system CPU time spent in seconds.',
    )
    .sample('process_cpu_seconds_total', '', 8123.4 + seed)
    .family('process_open_fds', 'gauge', 'Number of open file descriptors.')
    .sample('process_open_fds', '', 91)
    .family('process_max_fds', 'gauge', 'Maximum number of open file descriptors.')
    .sample('process_max_fds', '', 1048576);
  w.counter(
    'http_requests',
    'Total number of requests by method, status and handler.',
    HANDLERS.map((h, i) => [
      `handler="${h}",method="${i === 2 ? 'GET' : 'POST'}",status="2xx"`,
      req >> i,
    ]),
  );
  for (const [name, help] of [
    ['http_request_size_bytes', 'Content length of incoming requests by handler.'],
    ['http_response_size_bytes', 'Content length of outgoing responses by handler.'],
  ]) {
    w.family(name, 'summary', help);
    for (const h of HANDLERS) {
      w.sample(`${name}_count`, `handler="${h}"`, req).sample(
        `${name}_sum`,
        `handler="${h}"`,
        req * 1873,
      );
    }
    w.family(`${name}_created`, 'gauge', help);
    for (const h of HANDLERS) w.sample(`${name}_created`, `handler="${h}"`, created);
  }
  w.histogram(
    'http_request_duration_highr_seconds',
    'Latency with many buckets but no API specific labels. Made for more accurate percentile calculations.',
    HTTP_HIGHR,
    [{ labels: '', n: req, mode: 9 }],
  ).histogram(
    'http_request_duration_seconds',
    'Latency with only few buckets by handler. Made to be only used if aggregation by handler is important.',
    [0.1, 0.5, 1],
    HANDLERS.map((h, i) => ({
      labels: `handler="${h}",method="${i === 2 ? 'GET' : 'POST'}"`,
      n: req >> i,
      mode: 2,
    })),
  );
  w.family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.')
    .sample('vllm:num_requests_running', l, o.running ?? 0)
    .family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.')
    .sample('vllm:num_requests_waiting', l, o.waiting ?? 0)
    .family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.')
    .sample('vllm:kv_cache_usage_perc', l, o.kvUsage);
  w.counter('vllm:num_preemptions', 'Cumulative number of preemption from the engine.', [[l, 0]])
    .counter(
      'vllm:prefix_cache_queries',
      'Prefix cache queries, in terms of number of queried tokens.',
      [[l, req * 812]],
    )
    .counter('vllm:prefix_cache_hits', 'Prefix cache hits, in terms of number of cached tokens.', [
      [l, req * 301],
    ])
    .counter('vllm:prompt_tokens', 'Number of prefill tokens processed.', [[l, req * 812]])
    .counter('vllm:generation_tokens', 'Number of generation tokens processed.', [[l, req * 240]])
    .counter(
      'vllm:request_success',
      'Count of successfully processed requests.',
      ['stop', 'length', 'abort'].map((r, i) => [
        `${l},finished_reason="${r}"`,
        Math.floor(req / (1 + i * 9)),
      ]),
    );
  const hist: Array<[string, string, number[], number]> = [
    ['vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', ITERATION, 5],
    [
      'vllm:request_max_num_generation_tokens',
      'Histogram of maximum number of requested generation tokens.',
      TOKENS,
      9,
    ],
    ['vllm:request_prompt_tokens', 'Number of prefill tokens processed.', TOKENS, 9],
    ['vllm:request_generation_tokens', 'Number of generation tokens processed.', TOKENS, 7],
    ['vllm:request_params_n', 'Histogram of the n request parameter.', PARAMS_N, 0],
    ['vllm:request_params_max_tokens', 'Histogram of the max_tokens request parameter.', TOKENS, 9],
    ['vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT, 8],
    [
      'vllm:time_per_output_token_seconds',
      'Histogram of time per output token in seconds.',
      TPOT,
      3,
    ],
    ['vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', TPOT, 3],
    [
      'vllm:e2e_request_latency_seconds',
      'Histogram of e2e request latency in seconds.',
      LATENCY,
      8,
    ],
    [
      'vllm:request_queue_time_seconds',
      'Histogram of time spent in WAITING phase for request.',
      LATENCY,
      0,
    ],
    [
      'vllm:request_inference_time_seconds',
      'Histogram of time spent in RUNNING phase for request.',
      LATENCY,
      8,
    ],
    [
      'vllm:request_prefill_time_seconds',
      'Histogram of time spent in PREFILL phase for request.',
      LATENCY,
      0,
    ],
    [
      'vllm:request_decode_time_seconds',
      'Histogram of time spent in DECODE phase for request.',
      LATENCY,
      7,
    ],
  ];
  for (const [name, help, buckets, mode] of hist) {
    w.histogram(name, help, buckets, [{ labels: l, n: req, mode }]);
  }
  const cache = [
    'block_size="16"',
    'cache_dtype="auto"',
    'calculate_kv_scales="False"',
    'cpu_offload_gb="0"',
    'enable_prefix_caching="True"',
    'engine="0"',
    'gpu_memory_utilization="0.9"',
    'is_attention_free="False"',
    'num_cpu_blocks="None"',
    `num_gpu_blocks="${o.numGpuBlocks}"`,
    'num_gpu_blocks_override="None"',
    'prefix_caching_hash_algo="sha256"',
    'sliding_window="None"',
    'swap_space="4"',
  ].join(',');
  w.family('vllm:cache_config_info', 'gauge', 'Information of the LLMEngine CacheConfig').sample(
    'vllm:cache_config_info',
    cache,
    1,
  );
  return w.text();
}
