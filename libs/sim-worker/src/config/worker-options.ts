/** Which real engine's load endpoints the worker serves beside its OpenAI API. */
export const METRICS_FORMATS = ['none', 'vllm', 'sglang'] as const;
export type MetricsFormat = (typeof METRICS_FORMATS)[number];

/** Everything one simulated worker needs to start; `parseWorkerFlags` builds it from argv. */
export interface WorkerOptions {
  readonly model: string;
  /** KV cache size of each data-parallel rank, in blocks. */
  readonly kvTotalBlocks: number;
  readonly blockSize: number;
  readonly maxNumBatchedTokens: number;
  readonly maxNumSeqs: number;
  readonly dpSize: number;
  /** Divides every simulated delay; 0 runs steps back to back. */
  readonly speedup: number;
  readonly host: string;
  /** 0 picks an ephemeral port. */
  readonly port: number;
  /** Unset: the standalone worker publishes nothing. */
  readonly natsUrl: string | undefined;
  readonly namespace: string;
  readonly workerId: string;
  /** Base URL put in load reports; unset: `http://<host>:<actual port>`. */
  readonly advertiseUrl: string | undefined;
  readonly reportIntervalMs: number;
  /** `vllm`: `GET /metrics` as vLLM writes it; `sglang`: SGLang's `/v1/loads`, `/server_info`, `/metrics`. */
  readonly metricsFormat: MetricsFormat;
  /** vLLM format: answer `/metrics?name[]=…` with only those samples instead of everything. */
  readonly honourNameFilter: boolean;
}
