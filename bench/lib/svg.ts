/** A minimal SVG line chart (no dependency): a few series over a shared numeric x axis. */

export interface Series {
  name: string;
  color: string;
  points: Array<[number, number]>;
  dashed?: boolean;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Horizontal reference lines (e.g. capacity). */
  refs?: Array<{ y: number; label: string; color: string }>;
  logY?: boolean;
  xTicks?: number[];
  width?: number;
  height?: number;
}

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceTicks(min: number, max: number, count = 5): number[] {
  const span = max - min || 1;
  const step0 = span / count;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= count) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

function label(v: number): string {
  if (v >= 1000) return `${Number((v / 1000).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

type Ref = { y: number; label: string; color: string };

/** The y axis title and the dashed horizontal reference lines, shared by both charts. */
function yLabelAndRefs(
  yLabel: string,
  refs: Ref[] | undefined,
  fy: (y: number) => number,
  m: { l: number; t: number },
  pw: number,
  ph: number,
): string[] {
  const out = [
    `<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  ];
  for (const r of refs ?? []) {
    const y = fy(r.y);
    out.push(
      `<line x1="${m.l}" x2="${m.l + pw}" y1="${y}" y2="${y}" stroke="${r.color}" stroke-dasharray="6 4"/>`,
      `<text x="${m.l + pw - 4}" y="${y - 5}" text-anchor="end" fill="${r.color}">${esc(r.label)}</text>`,
    );
  }
  return out;
}

export function lineChart(o: ChartOptions): string {
  const W = o.width ?? 640;
  const H = o.height ?? 400;
  const m = { l: 70, r: 20, t: 40, b: 86 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const xs = o.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = [
    ...o.series.flatMap((s) => s.points.map((p) => p[1])),
    ...(o.refs ?? []).map((r) => r.y),
  ].filter((y) => Number.isFinite(y) && (!o.logY || y > 0));
  const xMin = 0;
  const xMax = Math.max(...xs) * 1.05;
  let yMin = o.logY ? Math.min(...ys) / 1.5 : 0;
  let yMax = Math.max(...ys) * (o.logY ? 1.5 : 1.1);
  if (o.logY) {
    yMin = 10 ** Math.floor(Math.log10(yMin));
    yMax = 10 ** Math.ceil(Math.log10(yMax));
  }
  const fx = (x: number): number => m.l + ((x - xMin) / (xMax - xMin)) * pw;
  const fy = (y: number): number =>
    o.logY
      ? m.t + ph - ((Math.log10(y) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * ph
      : m.t + ph - ((y - yMin) / (yMax - yMin)) * ph;
  const yTicks = o.logY
    ? Array.from({ length: Math.round(Math.log10(yMax / yMin)) + 1 }, (_, i) => yMin * 10 ** i)
    : niceTicks(yMin, yMax);
  const xTicks = o.xTicks ?? niceTicks(xMin, xMax);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(o.title)}</text>`,
  ];
  for (const t of yTicks) {
    const y = fy(t);
    parts.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${m.l - 6}" y="${y + 4}" text-anchor="end">${label(t)}</text>`);
  }
  for (const t of xTicks) {
    const x = fx(t);
    parts.push(`<line x1="${x}" x2="${x}" y1="${m.t}" y2="${m.t + ph}" stroke="#f0f0f0"/>`);
    parts.push(`<text x="${x}" y="${m.t + ph + 16}" text-anchor="middle">${label(t)}</text>`);
  }
  parts.push(
    `<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`,
  );
  parts.push(
    `<text x="${m.l + pw / 2}" y="${m.t + ph + 36}" text-anchor="middle">${esc(o.xLabel)}</text>`,
  );
  parts.push(...yLabelAndRefs(o.yLabel, o.refs, fy, m, pw, ph));
  for (const s of o.series) {
    const pts = s.points.filter(([, y]) => Number.isFinite(y) && (!o.logY || y > 0));
    const d = pts
      .map(([x, y], i) => `${i ? 'L' : 'M'}${fx(x).toFixed(1)},${fy(y).toFixed(1)}`)
      .join(' ');
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="8 4"' : ''}/>`,
    );
    for (const [x, y] of pts)
      parts.push(
        `<circle cx="${fx(x).toFixed(1)}" cy="${fy(y).toFixed(1)}" r="4" fill="${s.color}"/>`,
      );
  }
  // The legend: two rows per column under the axis title.
  o.series.forEach((s, i) => {
    const x = m.l + Math.floor(i / 2) * 190;
    const y = H - 26 + (i % 2) * 16;
    parts.push(
      `<line x1="${x}" x2="${x + 24}" y1="${y - 4}" y2="${y - 4}" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="8 4"' : ''}/>`,
    );
    parts.push(`<text x="${x + 30}" y="${y}">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
