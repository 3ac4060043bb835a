import { createHash } from 'node:crypto';
import { STATUS_PAGE_SCRIPT } from './status-page.script';

const STYLES = `
:root { --ok: #2f8f4e; --bad: #c93636; --muted: #6b7280; --line: #e5e7eb; --bg: #f4f5f7; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
  background: var(--bg); color: #111827; }
header { display: flex; align-items: baseline; gap: 16px; padding: 14px 24px; background: #111827;
  color: #f9fafb; }
header h1 { margin: 0; font-size: 20px; }
.mode { font-size: 13px; padding: 2px 8px; border-radius: 10px; }
.mode.on { background: #374151; } .mode.off { background: #7c5b00; } .mode.shadow { background: #1e3a8a; }
#updated { margin-left: auto; font-size: 13px; color: #d1d5db; font-variant-numeric: tabular-nums; }
.error { margin: 12px 24px 0; padding: 8px 12px; border-radius: 6px; background: #fde8e8;
  color: var(--bad); }
main { padding: 16px 24px; display: grid; gap: 16px; }
main.stale { opacity: 0.55; }
.card { background: #fff; border-radius: 10px; padding: 14px 18px; box-shadow: 0 1px 3px #0002; }
.card-head { display: flex; align-items: center; gap: 12px; }
.card-head h2 { margin: 0; font-size: 17px; overflow-wrap: anywhere; }
.badge { display: inline-block; min-width: 52px; text-align: center; padding: 2px 8px;
  border-radius: 10px; font-size: 12px; font-weight: 700; color: #fff; background: var(--ok); }
.badge.busy { background: var(--bad); } .badge.ejected { background: var(--bad); margin-left: 4px; } .badge.none { background: var(--muted); }
.stats { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 12px 0; }
.stat-label { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.stat-value { font-size: 18px; font-weight: 600; font-variant-numeric: tabular-nums; }
.stat.hot .stat-value { color: var(--bad); }
.class-free.refused { color: var(--bad); }
td.hot { color: var(--bad); font-weight: 600; }
.tenant-id { font-weight: 600; overflow-wrap: anywhere; }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; font-size: 11px; text-transform: uppercase; color: var(--muted);
  font-weight: 600; padding: 4px 8px; border-bottom: 1px solid var(--line); }
td { padding: 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.busy td.worker { border-left: 3px solid var(--bad); } tr.free td.worker { border-left: 3px solid var(--ok); }
.worker-id { font-weight: 600; overflow-wrap: anywhere; }
.endpoint, .muted { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.ranks { display: flex; flex-wrap: wrap; gap: 6px 14px; }
.rank { display: grid; grid-template-columns: auto 1fr; gap: 3px 8px; align-items: center; }
.rank-id { grid-row: span 3; font-size: 12px; color: var(--muted); }
.meter { display: flex; align-items: center; gap: 8px; }
.bar { position: relative; width: 180px; height: 14px; background: #e5e7eb; border-radius: 4px;
  overflow: hidden; flex: none; }
.bar .fill { height: 100%; background: var(--ok); }
.meter.over .fill { background: var(--bad); }
.meter.over .meter-text { color: var(--bad); font-weight: 600; }
.bar .marker { position: absolute; top: 0; bottom: 0; width: 2px; background: #111827; }
.meter-text { font-size: 12px; white-space: nowrap; font-variant-numeric: tabular-nums; }
.rank-waiting { font-size: 12px; white-space: nowrap; font-variant-numeric: tabular-nums; }
.rank-waiting.over { color: var(--bad); font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 28px; margin: 4px 0 14px; }
.chart { flex: 1 1 420px; min-width: 0; margin: 0; }
.chart figcaption { font-size: 12px; font-weight: 600; color: #374151; margin: 0 0 4px; }
.chart svg { display: block; width: 100%; height: auto; overflow: visible; }
.chart text { font-size: 11px; fill: var(--muted); font-variant-numeric: tabular-nums; }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart .axis { stroke: #9ca3af; stroke-width: 1; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin-top: 4px; font-size: 12px; color: #374151; }
.legend-item { display: inline-flex; align-items: center; gap: 6px; white-space: nowrap; }
.swatch { display: inline-block; width: 16px; height: 4px; border-radius: 2px; }
.legend-value { font-weight: 600; font-variant-numeric: tabular-nums; }
.legend-group { color: var(--muted); margin-right: -10px; }
`;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64');
}

/** `GET /ui`: one self-contained page; nothing is fetched but status.json. */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sluice status</title>
<style>${STYLES}</style>
</head>
<body>
<header><h1>Sluice</h1><span id="mode" class="mode"></span><span id="updated">loading…</span></header>
<div id="error" class="error" role="alert" hidden></div>
<main id="models"><p class="muted">Loading…</p></main>
<script>${STATUS_PAGE_SCRIPT}</script>
</body>
</html>
`;

/**
 * Only this page's own inline script and style may run, and it may only talk to its own origin:
 * a second line of defence behind the escaping, should a name from the network ever slip through.
 */
export const STATUS_PAGE_CSP = [
  "default-src 'none'",
  `script-src 'sha256-${sha256(STATUS_PAGE_SCRIPT)}'`,
  `style-src 'sha256-${sha256(STYLES)}'`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
