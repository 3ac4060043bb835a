import { NUMERIC_SPECS, THRESHOLD_SPECS } from '../config/threshold-keys';
import { STATUS_CHART_SCRIPT } from './status-page-chart.script';

/** One stat per threshold on each model's card, in the table's order. */
const THRESHOLD_STATS = THRESHOLD_SPECS.map(({ wire, status }) => ({
  wire,
  label: status.label,
  css: status.css,
}));

/**
 * The status.json key of the threshold marked on a rank's meter: the one busy threshold that
 * judges `over` (the prefill meter marks whichever of its two is in force, in the script).
 */
function markedThreshold(over: 'kv' | 'waiting'): string {
  const [spec, ...more] = NUMERIC_SPECS.filter((s) => s.status.over === over);
  if (!spec || more.length > 0) throw new Error(`no single threshold judges '${over}'`);
  return spec.wire;
}

/**
 * The browser side of `GET /ui`: polls status.json every second and redraws, and history.json
 * every 5 s for the charts (`status-page-chart.script.ts`). Every value from
 * the network reaches the DOM through `textContent`, `dataset` or a clamped number, never as
 * markup, so model names and worker ids cannot inject anything (the CSP also forbids it).
 * Kept as plain JavaScript in a string: the page must work with no build step and no assets.
 */
export const STATUS_PAGE_SCRIPT = String.raw`
'use strict';
(() => {
  const THRESHOLDS = ${JSON.stringify(THRESHOLD_STATS)};
  const POLL_MS = 1000;
  const HISTORY_POLL_MS = 5000;
  const TIMEOUT_MS = 5000;
  const base = location.pathname.replace(/\/+$/, '');
  const url = base + '/status.json';
  const historyUrl = base + '/history.json';
  const $ = (id) => document.getElementById(id);
  /** Each model's charts, drawn when history.json arrives and moved into each new card. */
  const charts = new Map();

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  const clamp01 = (x) => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);
  const share = (x) => (clamp01(x) * 100).toFixed(1) + '%';
  const pct = (x) => (x === null ? '–' : (Math.round(x * 1000) / 10).toString() + ' %');
  const num = (v) => (v === null ? 'unset' : String(v));
${STATUS_CHART_SCRIPT}

  function meter(kind, label, fill, over, marker, title) {
    const wrap = el('div', 'meter ' + kind + (over ? ' over' : ''));
    const track = el('div', 'bar');
    const f = el('div', 'fill');
    f.style.width = share(fill);
    track.append(f);
    if (marker !== null) {
      const m = el('div', 'marker');
      m.style.left = share(marker);
      track.append(m);
    }
    wrap.append(track, el('span', 'meter-text', label));
    wrap.title = title;
    return wrap;
  }

  function waiting(r, waitingThreshold) {
    const text = 'waiting ' + (r.num_requests_waiting === null ? '–' : r.num_requests_waiting);
    const span = el('span', 'rank-waiting' + (r.waiting_over_threshold ? ' over' : ''), text);
    span.title = 'requests queued in the engine' + (waitingThreshold === null ? '' : '; busy above ' + waitingThreshold);
    return span;
  }

  function rank(r, decodeThreshold, waitingThreshold) {
    const box = el('div', 'rank' + (r.busy ? ' busy' : ''));
    box.dataset.rank = String(r.dp_rank);
    box.append(el('span', 'rank-id', 'r' + r.dp_rank));
    if (!r.reported) {
      box.append(el('span', 'muted', 'not reported yet'));
      return box;
    }
    const kvLabel = 'KV ' + pct(r.kv_usage) + ' (' + r.active_decode_blocks + '/' + r.kv_total_blocks + ')';
    box.append(meter('kv', kvLabel, r.kv_usage, r.kv_over_threshold, decodeThreshold, 'KV-cache blocks in use'));
    const max = r.max_num_batched_tokens;
    const limit = r.prefill_limit_tokens;
    const scale = max !== null && max > 0 ? max : limit;
    const fill = scale ? r.active_prefill_tokens / scale : 0;
    const mark = scale && limit !== null ? limit / scale : null;
    const estimated = r.prefill_source === 'frontend';
    const label =
      'prefill ' + Math.round(r.active_prefill_tokens) + (max !== null ? ' / ' + max : '') + ' tok' + (estimated ? ' (sent)' : '');
    box.append(meter('prefill', label, fill, r.prefill_over_threshold, mark, 'prompt tokens waiting vs the batch budget'));
    box.append(waiting(r, waitingThreshold));
    return box;
  }

  function workerRow(w, m) {
    const tr = el('tr', w.busy ? 'busy' : 'free');
    tr.dataset.workerId = w.worker_id;
    const id = el('td', 'worker');
    id.append(el('div', 'worker-id', w.worker_id), el('div', 'endpoint', w.endpoint));
    const state = el('td');
    state.append(el('span', 'badge ' + (w.busy ? 'busy' : 'free'), w.busy ? 'BUSY' : 'free'));
    // Outlier ejection: out of routing until its backoff ends, then one probe request.
    if (w.routing !== 'in') {
      const until = w.ejected_until_ms === null ? '' : ' for ' + Math.max(0, (w.ejected_until_ms - Date.now()) / 1000).toFixed(0) + ' s';
      const text = w.routing === 'ejected' ? 'EJECTED' + until : w.routing === 'probing' ? 'PROBING' : 'PROBE DUE';
      state.append(el('span', 'badge ejected', text));
    }
    const ranks = el('div', 'ranks');
    for (const r of w.ranks) ranks.append(rank(r, m[${JSON.stringify(markedThreshold('kv'))}], m[${JSON.stringify(markedThreshold('waiting'))}]));
    const ranksCell = el('td');
    ranksCell.append(ranks);
    const age = el('td', 'num report-age');
    age.append(el('div', '', (w.report_measured_age_ms / 1000).toFixed(1) + ' s'));
    if (w.report_source) age.append(el('div', 'muted report-source', w.report_source));
    tr.append(id, state, el('td', 'num', w.inflight_requests), age, ranksCell);
    return tr;
  }

  function stat(label, value, cls) {
    const s = el('div', 'stat' + (cls ? ' ' + cls : ''));
    s.append(el('div', 'stat-label', label), el('div', 'stat-value', value));
    return s;
  }

  // Free workers per priority class; a class whose every worker is busy is refused.
  function classes(pc) {
    const s = stat('free for critical · standard · sheddable', '', 'priority-classes');
    const value = s.lastChild;
    ['critical', 'standard', 'sheddable'].forEach((c, i) => {
      if (i > 0) value.append(' · ');
      value.append(el('span', 'class-free ' + c + (pc[c].all_busy ? ' refused' : ''), pc[c].workers_free));
    });
    return s;
  }

  function modelCard(m, windowSeconds) {
    const card = el('section', 'card');
    card.dataset.model = m.model;
    const head = el('div', 'card-head');
    const enforced = m.admission_control === 'token-capacity';
    const state = m.workers_total === 0 ? ['none', 'no live workers'] : m.all_busy ? ['busy', enforced ? 'ALL BUSY' : 'ALL BUSY (' + m.admission_control + ': admitted)'] : ['free', 'accepting'];
    head.append(el('h2', 'model', m.model), el('span', 'badge ' + state[0], state[1]));
    const stats = el('div', 'stats');
    stats.append(
      ...THRESHOLDS.map((t) => stat(t.label, num(m[t.wire]), 'threshold ' + t.css)),
      stat('rejections/s (' + windowSeconds + ' s)', m.rejections_per_second.toFixed(1), 'rejections' + (m.rejections_per_second > 0 ? ' hot' : '')),
      stat('rejected total', m.rejections_total, 'rejected-total'),
      stat('in flight', m.inflight_requests, 'inflight'),
      stat('busy workers', m.workers_busy + ' / ' + m.workers_total, 'busy-count'),
      classes(m.priority_classes),
    );
    card.append(head, stats);
    if (charts.has(m.model)) card.append(charts.get(m.model));
    if (m.workers.length > 0) {
      const table = el('table');
      const hr = el('tr');
      for (const h of ['worker', 'state', 'in flight', 'report age · source', 'ranks: KV cache · prefill · waiting']) hr.append(el('th', '', h));
      table.append(el('thead'), el('tbody'));
      table.tHead.append(hr);
      for (const w of m.workers) table.tBodies[0].append(workerRow(w, m));
      card.append(table);
    }
    if (m.workers_omitted > 0) card.append(el('p', 'muted', m.workers_omitted + ' more worker(s) not listed'));
    return card;
  }

  const limit = (v, unit) => (v === null ? null : v + unit);

  /** One row per tenant: weight and its share, admitted and its share, refusals, tokens, limits. */
  function tenantRow(t) {
    const tr = el('tr');
    tr.dataset.tenant = t.tenant;
    const limits = [
      limit(t.limits.requests_per_minute, ' req/min'),
      limit(t.limits.tokens_per_minute, ' tok/min'),
      limit(t.limits.max_concurrency, ' in flight'),
      t.limits.priority === null ? null : 'up to ' + t.limits.priority,
    ].filter((x) => x !== null);
    const r = t.requests;
    tr.append(
      el('td', 'tenant-id', t.tenant),
      el('td', 'num weight', t.weight + ' (' + pct(t.weight_share) + ')'),
      el('td', 'num admitted', r.admitted + ' (' + pct(t.admitted_share) + ')'),
      el('td', 'num rate-limited' + (r.rate_limited > 0 ? ' hot' : ''), r.rate_limited),
      el('td', 'num overloaded' + (r.overloaded > 0 ? ' hot' : ''), r.overloaded),
      el('td', 'num tokens', t.tokens.prompt + ' + ' + t.tokens.completion),
      el('td', 'num in-flight', t.in_flight),
      el('td', 'limits', limits.length === 0 ? 'none' : limits.join(' · ')),
    );
    return tr;
  }

  function tenantsCard(ts) {
    const card = el('section', 'card tenants');
    const head = el('div', 'card-head');
    head.append(el('h2', '', 'Tenants'), el('span', 'muted', 'last ' + ts.window_minutes + ' min on this frontend'));
    card.append(head);
    if (ts.tenants.length > 0) {
      const table = el('table');
      const hr = el('tr');
      for (const h of ['tenant', 'weight (share)', 'admitted (share)', 'refused 429 over limit', 'refused 503 overloaded', 'tokens prompt + completion', 'in flight', 'limits']) hr.append(el('th', '', h));
      table.append(el('thead'), el('tbody'));
      table.tHead.append(hr);
      for (const t of ts.tenants) table.tBodies[0].append(tenantRow(t));
      card.append(table);
    } else card.append(el('p', 'muted', 'No tenants are configured.'));
    if (ts.tenants_omitted > 0) card.append(el('p', 'muted tenants-omitted', 'and ' + ts.tenants_omitted + ' more tenant(s) not listed'));
    return card;
  }

  function render(s) {
    const mode = $('mode');
    const modes = {
      'token-capacity': ['on', 'rejecting when all workers are busy'],
      shadow: ['shadow', 'admission-control shadow: would-be rejections counted, nothing rejected'],
      none: ['off', 'admission-control none: nothing is rejected'],
    };
    const [cls, text] = modes[s.admission_control] || modes.none;
    mode.textContent = text + ' (models may set their own)';
    mode.className = 'mode ' + cls;
    const cards = s.models.map((m) => modelCard(m, s.rejection_window_seconds));
    if (cards.length === 0) cards.push(el('p', 'muted', 'No workers have reported yet.'));
    if (s.models_omitted > 0) cards.push(el('p', 'muted', s.models_omitted + ' more model(s) not listed'));
    if (s.tenants) cards.push(tenantsCard(s.tenants));
    $('models').replaceChildren(...cards);
    $('updated').textContent = 'updated ' + new Date(s.generated_at_ms).toLocaleTimeString();
    $('error').hidden = true;
    $('models').classList.remove('stale');
    document.body.dataset.generatedAt = String(s.generated_at_ms);
  }

  function renderHistory(h) {
    charts.clear();
    for (const m of h.models) charts.set(m.model, modelCharts(m, h));
    for (const card of $('models').children) {
      const fresh = charts.get(card.dataset.model);
      const old = [...card.children].find((c) => c.classList.contains('charts'));
      if (fresh && old) old.replaceWith(fresh);
      else if (fresh) card.querySelector('.stats').after(fresh);
      else if (old) old.remove();
    }
    document.body.dataset.historyAt = String(h.generated_at_ms);
  }

  /** A failure leaves the charts as they are: the status poll already says the server is away. */
  async function pollHistory() {
    try {
      const res = await fetch(historyUrl, { cache: 'no-store', signal: AbortSignal.timeout(TIMEOUT_MS) });
      if (res.ok) renderHistory(await res.json());
    } catch {
      // retried below
    } finally {
      setTimeout(pollHistory, HISTORY_POLL_MS);
    }
  }

  async function poll() {
    try {
      const res = await fetch(url, { cache: 'no-store', signal: AbortSignal.timeout(TIMEOUT_MS) });
      if (!res.ok) throw new Error('HTTP ' + res.status);
      render(await res.json());
    } catch (err) {
      $('error').textContent = 'Cannot load status (' + String(err && err.message ? err.message : err) + '); retrying…';
      $('error').hidden = false;
      $('models').classList.add('stale');
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }
  void poll();
  void pollHistory();
})();
`;
