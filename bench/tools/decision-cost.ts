/**
 * Scenario 3, in its own process: the cost of one admission decision with the real classes, at
 * 10, 1,000 and 10,000 workers of one model. Timed is `AdmissionDecision.decide(body)`, the call
 * the request path makes (the early 503 hook for every OpenAI POST, the guard again for admitted
 * ones): it returns null (admit) or the refusal to send, without throwing. Beside it, as a
 * diagnostic, the guard's own refusal, which signals by exception (used only where the hook is
 * not installed). Prints one JSON line: ns per decision for every (workers, outcome, round).
 *
 *   node dist/bench/tools/decision-cost.js ROUNDS ADMIT_ITERS REJECT_ITERS
 */
import { ExecutionContext, Logger } from '@nestjs/common';
import { AdmissionDecision } from '../../libs/frontend/src/admission/admission-decision.service';
import { AdmissionGuard } from '../../libs/frontend/src/admission/admission.guard';
import { AdmissionPolicies } from '../../libs/frontend/src/admission/admission-policy';
import { LifecycleService } from '../../libs/frontend/src/admission/lifecycle.service';
import { ServiceOverloadedError } from '../../libs/frontend/src/admission/errors/service-overloaded.error';
import { FrontendConfig } from '../../libs/frontend/src/config/frontend-config';
import { WorkerRegistry } from '../../libs/frontend/src/worker-monitor/worker-registry.service';
import { ThresholdsService } from '../../libs/frontend/src/thresholds/thresholds.service';
import { parseKvMetricsReport } from '@sluice/contracts';

const MODEL = 'Qwen/Qwen3-0.6B';
const SIZES = [10, 1000, 10000];

interface Setup {
  decision: AdmissionDecision;
  body: unknown;
  guard: AdmissionGuard;
  context: ExecutionContext;
}

function build(workers: number, allBusy: boolean): Setup {
  const config = new FrontendConfig({
    admissionControl: 'token-capacity',
    thresholds: {
      activeDecodeBlocks: 0.85,
      activePrefillTokens: null,
      activePrefillTokensFrac: null,
    },
  });
  const registry = new WorkerRegistry(config, new ThresholdsService(config));
  const now = Date.now();
  for (let i = 0; i < workers; i++) {
    const free = !allBusy && i === workers - 1;
    const parsed = parseKvMetricsReport({
      worker_id: `w-${i}`,
      model: MODEL,
      endpoint: `http://10.0.${i >> 8}.${i & 255}:9001`,
      dp_rank: 0,
      dp_size: 1,
      active_decode_blocks: free ? 10 : 95,
      kv_total_blocks: 100,
      active_prefill_tokens: 0,
      max_num_batched_tokens: 8192,
    });
    if (!parsed.ok) throw new Error(parsed.reason);
    registry.applyReport(parsed.value, now);
  }
  // Not shutting down and no custom admission policies: the production default.
  const decision = new AdmissionDecision(config, registry, new LifecycleService());
  const guard = new AdmissionGuard(decision, new AdmissionPolicies([]), config);
  // The parsed chat body, as Fastify hands it to the hook.
  const body = { model: MODEL, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 };
  const request = {
    url: '/v1/chat/completions',
    ip: '127.0.0.1',
    headers: { 'content-type': 'application/json' },
    body,
  };
  const response = {};
  const http = { getRequest: () => request, getResponse: () => response };
  // Nest builds one ExecutionContextHost per request; the guard only asks it for the request.
  const context = {
    switchToHttp: () => http,
    getType: () => 'http',
  } as unknown as ExecutionContext;
  return { decision, body, guard, context };
}

function timeAdmit({ decision, body }: Setup, iters: number): number {
  let admitted = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iters; i++) if (decision.decide(body) === null) admitted++;
  const t1 = process.hrtime.bigint();
  if (admitted !== iters) throw new Error(`expected ${iters} admissions, got ${admitted}`);
  return Number(t1 - t0) / iters;
}

function timeReject({ decision, body }: Setup, iters: number): number {
  let rejected = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iters; i++) if (decision.decide(body)?.rejection === true) rejected++;
  const t1 = process.hrtime.bigint();
  if (rejected !== iters) throw new Error(`expected ${iters} rejections, got ${rejected}`);
  return Number(t1 - t0) / iters;
}

/** The guard's refusal: the same decision, signalled by throwing `ServiceOverloadedError`. */
function timeGuardReject({ guard, context }: Setup, iters: number): number {
  let rejected = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iters; i++) {
    try {
      // Always throws here (every worker busy); never a promise, as no policy is configured.
      void guard.canActivate(context);
    } catch {
      rejected++;
    }
  }
  const t1 = process.hrtime.bigint();
  if (rejected !== iters) throw new Error(`expected ${iters} rejections, got ${rejected}`);
  return Number(t1 - t0) / iters;
}

function main(): void {
  Logger.overrideLogger(false);
  const [rounds, admitIters, rejectIters] = process.argv.slice(2).map(Number);
  const setups = SIZES.map((n) => ({ n, admit: build(n, false), reject: build(n, true) }));
  const out: Array<{ workers: number; outcome: 'admit' | 'reject'; ns: number[] }> = [];
  for (const s of setups) {
    out.push(
      { workers: s.n, outcome: 'admit', ns: [] },
      { workers: s.n, outcome: 'reject', ns: [] },
    );
    timeAdmit(s.admit, admitIters);
    timeReject(s.reject, rejectIters);
  }
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < setups.length; k++) {
      const s = setups[(k + r) % setups.length];
      out
        .find((o) => o.workers === s.n && o.outcome === 'admit')
        ?.ns.push(timeAdmit(s.admit, admitIters));
      out
        .find((o) => o.workers === s.n && o.outcome === 'reject')
        ?.ns.push(timeReject(s.reject, rejectIters));
    }
  }
  // Diagnostics for the report: the guard's throwing refusal (stack capture off, as it does it),
  // what constructing the error with a stack trace costs alone, and throw + catch alone.
  const big = setups[setups.length - 1];
  const diag = {
    guardRejectNs: [] as number[],
    newErrorNs: [] as number[],
    throwCatchNs: [] as number[],
  };
  const prealloc = new ServiceOverloadedError(MODEL);
  // Throwing costs microseconds: fewer iterations are enough for these.
  const diagIters = Math.min(rejectIters, 100_000);
  for (let r = 0; r < Math.max(3, Math.ceil(rounds / 3)); r++) {
    let keep = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < diagIters; i++) keep += new ServiceOverloadedError(MODEL).status;
    diag.newErrorNs.push(Number(process.hrtime.bigint() - t0) / diagIters);
    if (keep !== 503 * diagIters) throw new Error('unexpected status');
    let caught = 0;
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < diagIters; i++) {
      try {
        throw prealloc;
      } catch {
        caught++;
      }
    }
    diag.throwCatchNs.push(Number(process.hrtime.bigint() - t1) / diagIters);
    if (caught !== diagIters) throw new Error('unexpected catch count');
    diag.guardRejectNs.push(timeGuardReject(big.reject, diagIters));
  }
  process.stdout.write(`${JSON.stringify({ series: out, diagnostics: diag })}\n`);
}

main();
