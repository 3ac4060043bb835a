import { percentile, sortedSamples, summarizeLatencies } from './latency.percentile';
import { LoadgenOptions } from './loadgen.options';
import { RunStats } from './run.stats';

/** The `--json` line; field names are relied on by scripts and benchmarks. */
export interface LoadSummary {
  url: string;
  model: string;
  endpoint: 'chat' | 'completions';
  stream: boolean;
  target_rate: number;
  duration_s: number;
  /** From the first arrival until the last request settled (send window + drain). */
  elapsed_s: number;
  interrupted: boolean;
  arrivals: number;
  sent: number;
  ok_200: number;
  rejected_503: number;
  other_errors: number;
  other_error_kinds: Record<string, number>;
  dropped: number;
  aborted: number;
  /** rejected_503 / sent. */
  rejection_ratio: number;
  /** ok_200 / elapsed_s. */
  success_rps: number;
  latency_p50_ms: number | null;
  latency_p90_ms: number | null;
  latency_p99_ms: number | null;
  latency_max_ms: number | null;
  ttft_p50_ms: number | null;
  ttft_p99_ms: number | null;
  rejected_latency_p50_ms: number | null;
  rejected_latency_p99_ms: number | null;
  output_tokens: number;
  output_tokens_per_s: number;
  /** How late the worst arrival was sent; large values mean the generator fell behind. */
  max_schedule_lag_ms: number;
}

export interface RunTiming {
  elapsedMs: number;
  interrupted: boolean;
}

const round = (x: number, digits: number): number => Number(x.toFixed(digits));
const ms = (x: number | null): number | null => (x === null ? null : round(x, 1));

export function buildSummary(
  options: LoadgenOptions,
  stats: RunStats,
  timing: RunTiming,
): LoadSummary {
  const c = stats.counters;
  const elapsedS = timing.elapsedMs / 1000;
  const perSecond = (n: number): number => (elapsedS > 0 ? round(n / elapsedS, 2) : 0);
  const latency = summarizeLatencies(stats.okLatenciesMs);
  const ttft = sortedSamples(stats.okTtftsMs);
  const rejected = sortedSamples(stats.rejectedLatenciesMs);
  return {
    url: options.url.href,
    model: options.model,
    endpoint: options.endpoint,
    stream: options.stream,
    target_rate: options.rate,
    duration_s: options.durationS,
    elapsed_s: round(elapsedS, 3),
    interrupted: timing.interrupted,
    arrivals: stats.arrivals,
    sent: c.sent,
    ok_200: c.ok,
    rejected_503: c.rejected,
    other_errors: c.other,
    other_error_kinds: Object.fromEntries([...stats.otherKinds].sort(([, a], [, b]) => b - a)),
    dropped: c.dropped,
    aborted: c.aborted,
    rejection_ratio: c.sent > 0 ? round(c.rejected / c.sent, 4) : 0,
    success_rps: perSecond(c.ok),
    latency_p50_ms: ms(latency.p50),
    latency_p90_ms: ms(latency.p90),
    latency_p99_ms: ms(latency.p99),
    latency_max_ms: ms(latency.max),
    ttft_p50_ms: ms(percentile(ttft, 50)),
    ttft_p99_ms: ms(percentile(ttft, 99)),
    rejected_latency_p50_ms: ms(percentile(rejected, 50)),
    rejected_latency_p99_ms: ms(percentile(rejected, 99)),
    output_tokens: stats.outputTokens,
    output_tokens_per_s: perSecond(stats.outputTokens),
    max_schedule_lag_ms: round(stats.maxScheduleLagMs, 1),
  };
}

const fmtMs = (x: number | null): string => (x === null ? '-' : `${x} ms`);

/** The human-readable summary. */
export function formatSummary(s: LoadSummary): string {
  const kinds = Object.entries(s.other_error_kinds)
    .map(([label, n]) => `${label} x${n}`)
    .join(', ');
  const mode = `${s.endpoint}${s.stream ? ' stream' : ''}`;
  return [
    `Sluice loadgen: ${mode}, model ${s.model} at ${s.url}${s.interrupted ? ' (interrupted)' : ''}`,
    `  target           ${s.target_rate} req/s for ${s.duration_s} s (${s.arrivals} arrivals, elapsed ${s.elapsed_s} s)`,
    `  sent             ${s.sent}   dropped ${s.dropped}   aborted ${s.aborted}`,
    `  completed        200: ${s.ok_200}   503: ${s.rejected_503}   other: ${s.other_errors}${kinds === '' ? '' : ` (${kinds})`}`,
    `  rejection ratio  ${(s.rejection_ratio * 100).toFixed(1)} % of sent`,
    `  throughput       ${s.success_rps} successful req/s, ${s.output_tokens_per_s} output tokens/s`,
    `  latency 200      p50 ${fmtMs(s.latency_p50_ms)}   p90 ${fmtMs(s.latency_p90_ms)}   p99 ${fmtMs(s.latency_p99_ms)}   max ${fmtMs(s.latency_max_ms)}`,
    `  TTFT 200         p50 ${fmtMs(s.ttft_p50_ms)}   p99 ${fmtMs(s.ttft_p99_ms)}`,
    `  latency 503      p50 ${fmtMs(s.rejected_latency_p50_ms)}   p99 ${fmtMs(s.rejected_latency_p99_ms)}`,
    `  max schedule lag ${s.max_schedule_lag_ms} ms`,
  ].join('\n');
}

/** Non-null when the target could not be reached at all: every request failed to connect. */
export function unreachableMessage(s: LoadSummary, stats: RunStats): string | null {
  const failed = stats.connectFailures;
  if (failed === 0 || s.ok_200 + s.rejected_503 > 0 || failed + s.aborted < s.sent) return null;
  const codes = Object.keys(s.other_error_kinds).join(', ');
  return `could not reach ${s.url}: all ${failed} requests failed to connect (${codes}). Is Sluice running there?`;
}
