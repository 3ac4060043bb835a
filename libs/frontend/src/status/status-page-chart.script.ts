/**
 * The charts of the status page: per model, requests/s (admitted, and rejected by priority
 * class) and worker load (busy share, mean KV usage) over the last 10 minutes, drawn as inline
 * SVG from `history.json`. Plain JavaScript in a string, spliced into the page's one script (so
 * one CSP hash covers both); it defines `modelCharts(m, h)` there. Values reach the DOM only as
 * numbers in attributes or through `textContent`.
 */
export const STATUS_CHART_SCRIPT = String.raw`
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const BOX = { w: 560, h: 190, left: 44, right: 12, top: 10, bottom: 24 };
  const RATE_SERIES = [
    { key: 'admitted', label: 'admitted', color: '#2563eb', area: true, get: (m) => m.admitted_per_second },
    { key: 'rejected-critical', group: 'rejected:', label: 'critical', color: '#7f1d1d', get: (m) => m.rejected_per_second.critical },
    { key: 'rejected-standard', group: 'rejected:', label: 'standard', color: '#dc2626', get: (m) => m.rejected_per_second.standard },
    { key: 'rejected-sheddable', group: 'rejected:', label: 'sheddable', color: '#f59e0b', get: (m) => m.rejected_per_second.sheddable },
  ];
  const LOAD_SERIES = [
    { key: 'kv-usage', label: 'KV usage (mean)', color: '#0d9488', area: true, get: (m) => m.kv_usage },
    { key: 'busy-share', label: 'busy workers', color: '#7c3aed', get: (m) => m.busy_worker_share },
  ];

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
  const trim = (x) => String(Math.round(x * 100) / 100);

  /** Ticks from 0 in round steps (1, 2, 2.5 or 5 × 10^k), about four intervals, to at least max (≥ 1). */
  function rateTicks(max) {
    const top = Math.max(max, 1);
    const raw = top / 4;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / p;
    const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
    const ticks = [0];
    while (ticks[ticks.length - 1] < top - 1e-9) ticks.push(Math.round(ticks.length * step * 1e6) / 1e6);
    return ticks;
  }

  /** Axes, grid and tick labels; returns the functions that place a point. */
  function frame(root, h, ticks, label) {
    const plotW = BOX.w - BOX.left - BOX.right;
    const plotH = BOX.h - BOX.top - BOX.bottom;
    const spanMs = h.window_seconds * 1000;
    const fromMs = h.generated_at_ms - spanMs;
    const top = ticks[ticks.length - 1];
    const X = (t) => BOX.left + (Math.min(Math.max(t - fromMs, 0), spanMs) / spanMs) * plotW;
    const Y = (v) => BOX.top + plotH - (Math.min(Math.max(v, 0), top) / top) * plotH;
    for (const t of ticks) {
      root.append(svg('line', { class: t === 0 ? 'axis' : 'grid', x1: BOX.left, x2: BOX.left + plotW, y1: Y(t), y2: Y(t) }));
      root.append(svg('text', { x: BOX.left - 6, y: Y(t) + 4, 'text-anchor': 'end' }, label(t)));
    }
    const minutes = h.window_seconds / 60;
    for (let k = 0; k <= 5; k++) {
      const x = BOX.left + (k / 5) * plotW;
      root.append(svg('line', { class: 'axis', x1: x, x2: x, y1: BOX.top + plotH, y2: BOX.top + plotH + 4 }));
      const text = k === 5 ? 'now' : '−' + trim(minutes * (1 - k / 5)) + ' min';
      root.append(svg('text', { x, y: BOX.h - 6, 'text-anchor': k === 0 ? 'start' : k === 5 ? 'end' : 'middle' }, text));
    }
    return { X, Y, base: BOX.top + plotH };
  }

  /**
   * One series: its line (broken where a value is null), an optional area and a dot at its newest
   * value. A series that is 0 all along is listed in the legend but not drawn, so it does not
   * hide the axis and the others at 0. Its values stay on the line's data-values.
   */
  function series(root, s, values, times, at) {
    const path = svg('path', { class: 'series', fill: 'none', stroke: s.color, 'stroke-width': 2, 'stroke-linejoin': 'round' });
    path.dataset.series = s.key;
    path.dataset.values = values.map((v) => (isNum(v) ? String(v) : '')).join(',');
    root.append(path);
    if (!values.some((v) => isNum(v) && v !== 0)) return;
    let line = '';
    let area = '';
    let run = [];
    const flush = () => {
      if (run.length > 0 && s.area) {
        area += 'M' + run[0][0] + ' ' + at.base + 'L' + run.map((p) => p.join(' ')).join('L') + 'L' + run[run.length - 1][0] + ' ' + at.base + 'Z';
      }
      run = [];
    };
    values.forEach((v, i) => {
      if (!isNum(v)) return flush();
      const p = [at.X(times[i]).toFixed(1), at.Y(v).toFixed(1)];
      line += (run.length === 0 ? 'M' : 'L') + p.join(' ');
      run.push(p);
    });
    const last = run[run.length - 1];
    flush();
    path.setAttribute('d', line);
    if (area) path.before(svg('path', { d: area, fill: s.color, 'fill-opacity': 0.12, stroke: 'none' }));
    if (last) root.append(svg('circle', { cx: last[0], cy: last[1], r: 3, fill: s.color }));
  }

  /** Each series with its colour and newest value; a group's name (rejected:) once before its first. */
  function legend(list, m, format) {
    const box = el('div', 'legend');
    let group;
    for (const s of list) {
      if (s.group && s.group !== group) box.append(el('span', 'legend-group', s.group));
      group = s.group;
      const values = s.get(m).filter(isNum);
      const item = el('span', 'legend-item');
      item.dataset.series = s.key;
      item.title = (s.group ? s.group + ' ' : '') + s.label;
      const swatch = el('span', 'swatch');
      swatch.style.background = s.color;
      const value = values.length ? format(values[values.length - 1]) : '–';
      item.append(swatch, el('span', '', s.label), ' ', el('span', 'legend-value', value));
      box.append(item);
    }
    return box;
  }

  function chart(kind, title, list, m, h, ticks, tickLabel, format) {
    const fig = el('figure', 'chart ' + kind);
    const root = svg('svg', { viewBox: '0 0 ' + BOX.w + ' ' + BOX.h, role: 'img', 'aria-label': title });
    const at = frame(root, h, ticks, tickLabel);
    for (const s of list) series(root, s, s.get(m), m.t_ms, at);
    fig.append(el('figcaption', '', title), root, legend(list, m, format));
    return fig;
  }

  function modelCharts(m, h) {
    const box = el('div', 'charts');
    const peak = Math.max(0, ...RATE_SERIES.flatMap((s) => s.get(m).filter(isNum)));
    const minutes = trim(h.window_seconds / 60);
    box.append(
      chart('rates', 'Requests per second · last ' + minutes + ' min', RATE_SERIES, m, h, rateTicks(peak), trim, (v) => trim(v) + '/s'),
      chart('load', 'Worker load · last ' + minutes + ' min', LOAD_SERIES, m, h, [0, 0.25, 0.5, 0.75, 1], (t) => t * 100 + '%', (v) => Math.round(v * 100) + ' %'),
    );
    return box;
  }
`;
