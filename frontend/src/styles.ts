/** The dashboard's CSS, injected once by render(): light and dark palettes as custom properties. */
export const CSS = `
:root, body { margin: 0; height: 100%; }
body { --bg: #fff; --panel: #fafafa; --fg: #212121; --muted: #5f6368; --line: #e0e0e0; --head: #f1f3f4;
  --sel: #fff3c4; --focus: #ffe082; --input: #e3f2fd; --accent: #f57c00; --link: #0d47a1;
  --neginf: #1e63c6; --posinf: #b84a00; --nan: #b71c1c; --ok: #2e7d32; --info: #546e7a; --unknown: #8d6e63;
  --fn: #7e57c2; --op: #00796b; --split: #e0e0e0; --chip-fg: #fff;
  --h-nonfinite: #fde2e0; --h-finite: #e6f4ea; --h-contained: #eee;
  font: 12px/1.35 Roboto, "Segoe UI", Arial, sans-serif; background: var(--bg); color: var(--fg); overflow: hidden; }
body.dbg-dark { --bg: #202124; --panel: #292a2d; --fg: #e8eaed; --muted: #9aa0a6; --line: #3c4043; --head: #303134;
  --sel: #4a4220; --focus: #3d3412; --input: #17324d; --chip-fg: #202124;
  --h-nonfinite: #5c2523; --h-finite: #1f3a27; --h-contained: #333; --link: #8ab4f8; --split: #3c4043;
  --neginf: #64a0ff; --posinf: #ff9e40; --nan: #ff8a80; --ok: #81c995; --info: #9ab; --unknown: #bcaaa4; --op: #4db6ac; }
* { box-sizing: border-box; }
button, input, select { font: inherit; color: inherit; }
input, select { background: var(--bg); border: 1px solid var(--line); border-radius: 3px; padding: 1px 4px; }
button { background: var(--head); border: 1px solid var(--line); border-radius: 3px; cursor: pointer; padding: 1px 6px; }
button:disabled { opacity: .45; cursor: default; }
.muted { color: var(--muted); }
.dbg-root { display: flex; flex-direction: column; height: 100vh; width: 100vw; position: relative; }
.dbg-header { display: flex; gap: 12px; align-items: center; padding: 4px 8px; border-bottom: 1px solid var(--line); background: var(--head); min-height: 28px; }
.dbg-header .status { color: var(--muted); min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; flex: 1; }
.dbg-header { position: relative; }
.dbg-header .status.warn { color: var(--fg); }
.status-problem { font-weight: 600; }
.status-problem.sev-error, .status-toggle.sev-error, .notice-group.sev-error .notice-title { color: var(--nan); }
.status-problem.sev-warning, .status-toggle.sev-warning, .notice-group.sev-warning .notice-title { color: var(--accent); }
.status-toggle { flex: 0 0 auto; white-space: nowrap; background: var(--bg); }
.status-toggle.sev-info { color: var(--info); }
.status-toggle.open { background: var(--sel); }
.notice-list { position: absolute; top: 100%; right: 8px; z-index: 20; width: min(760px, calc(100vw - 16px)); max-height: 45vh; overflow: auto;
  background: var(--bg); border: 1px solid var(--line); border-radius: 4px; box-shadow: 0 4px 12px rgba(0,0,0,.25); padding: 4px 8px; }
.notice-group { padding: 4px 0; border-bottom: 1px solid var(--line); }
.notice-group:last-child { border-bottom: 0; }
.notice-group.sev-info .notice-title { color: var(--info); }
.notice-title { font-weight: 600; overflow-wrap: anywhere; }
.notice-details { margin: 2px 0 0 18px; padding: 0; color: var(--muted); font-family: Menlo, Consolas, monospace; font-size: 11px; }
.notice-details li { overflow-wrap: anywhere; }
.notice-where { margin-left: 18px; }
.sev-badge { display: inline-block; width: 13px; height: 13px; line-height: 13px; border-radius: 50%; text-align: center;
  font-size: 10px; font-weight: 700; color: #fff; background: var(--info); vertical-align: 1px; }
.sev-badge.sev-error { background: var(--nan); } .sev-badge.sev-warning { background: var(--accent); }
.index-progress { width: 90px; height: 8px; accent-color: var(--accent); }
.dbg-main { flex: 1 1 0; min-height: 0; }
.col { display: flex; flex-direction: column; min-height: 0; min-width: 0; }
.row { display: flex; flex-direction: row; min-height: 0; min-width: 0; }
.pane { min-height: 0; min-width: 0; overflow: hidden; display: flex; }
.pane.col { flex-direction: column; } .pane.row { flex-direction: row; }
.splitter { background: var(--split); flex: 0 0 4px; }
.splitter-row { cursor: col-resize; } .splitter-column { cursor: row-resize; }
.splitter:hover { background: var(--accent); }
.panel { position: relative; display: flex; flex-direction: column; flex: 1 1 0; min-height: 0; min-width: 0; background: var(--panel); }
.panel-head { display: flex; align-items: center; gap: 6px; padding: 3px 6px; border-bottom: 1px solid var(--line); background: var(--head); min-height: 26px; flex-wrap: wrap; }
.panel-title { font-weight: 600; white-space: nowrap; }
.panel-tools { display: flex; gap: 4px; align-items: center; flex-wrap: wrap; margin-left: auto; }
.panel-body { position: relative; flex: 1 1 0; min-height: 0; display: flex; flex-direction: column; overflow: hidden; }
.panel-status { position: absolute; left: 0; right: 0; top: 27px; bottom: 0; padding: 12px; color: var(--muted); background: var(--panel); z-index: 5; }
.panel-status-error { color: var(--nan); }
.panel-status-loading { background: transparent; pointer-events: none; top: auto; bottom: 0; height: auto; padding: 2px 6px; font-style: italic; }
/* With a root-cause card above, an empty alert list explains itself below the card instead of covering it. */
.panel.has-rc .panel-status-empty { top: auto; min-height: 40%; }
.vl { position: relative; flex: 1 1 0; min-height: 0; outline: none; }
.vl:focus-visible { box-shadow: inset 0 0 0 1px var(--accent); }
.vl-scroller { position: absolute; inset: 0; overflow-y: auto; overflow-x: hidden; }
.vl-layer { position: sticky; top: 0; overflow: hidden; }
.vl-row { position: absolute; left: 0; right: 0; top: 0; display: grid; align-items: center; white-space: nowrap; cursor: pointer; border-bottom: 1px solid var(--line); padding: 0 4px; }
.vl-row:hover { background: var(--head); }
.vl-row.pending { color: var(--muted); }
.vl-row.input-row { background: var(--input); }
/* Only the current focus is highlighted; a list's keyboard cursor (selected) is a thin mark. */
.vl-row.focused, .vl-row.previewed { background: var(--focus); }
.vl-row.selected:not(.focused) { box-shadow: inset 3px 0 0 var(--accent); }
.vl-row > span { overflow: hidden; text-overflow: ellipsis; }
/* Health right after the name: in a narrow pane names truncate and dtype/shape go, never the health counts. */
.ge-row { display: grid; grid-template-columns: 52px minmax(60px, 1.6fr) minmax(140px, 1.8fr) minmax(40px, 1fr) 24px minmax(0, 52px) minmax(0, 70px) minmax(0, 48px); gap: 4px; }
.ge-device { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: var(--muted); }
.ge-facet { max-width: 10em; }
.ge-row .chips { overflow: hidden; }
.ge-head > span { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.ge-head { padding: 2px 4px; font-weight: 600; color: var(--muted); border-bottom: 1px solid var(--line); }
.ge-idx, .alert-idx { color: var(--muted); font-variant-numeric: tabular-nums; }
.panel-tools input { width: 90px; } .panel-tools input[type=checkbox] { width: auto; }
.filter-nf { display: flex; align-items: center; gap: 2px; white-space: nowrap; }
.ge-count { color: var(--muted); white-space: nowrap; }
.ge-jump-error { color: var(--nan); font-size: 11px; white-space: nowrap; }
.jump-index[aria-invalid=true], .panel-tools input[aria-invalid=true] { border-color: var(--nan); outline: 1px solid var(--nan); }
.ge-note { padding: 2px 6px; background: var(--sel); font-size: 11px; }
.focus-back { font-size: 11px; }
.chips { display: inline-flex; gap: 3px; }
.chip { border-radius: 8px; padding: 0 6px; font-size: 11px; line-height: 16px; white-space: nowrap; color: var(--chip-fg); }
.chip-neginf { background: var(--neginf); } .chip-posinf { background: var(--posinf); } .chip-nan { background: var(--nan); }
.chip-bad { background: var(--nan); } .chip-ok { background: transparent; color: var(--ok); border: 1px solid var(--ok); }
.chip-info { background: transparent; color: var(--info); border: 1px solid var(--info); }
.chip-empty { background: transparent; color: var(--muted); border: 1px dashed var(--muted); }
.chip-count { background: transparent; color: var(--fg); border: 1px solid var(--line); font-variant-numeric: tabular-nums; }
.chip-more { background: transparent; color: var(--fg); border: 1px dashed var(--line); font-style: italic; }
.chip-warn { background: #ffe0b2; color: #7a3b00; border: 1px solid var(--accent); font-weight: 600; }
body.dbg-dark .chip-warn { background: #5a3a10; color: #ffd8a8; }
.chip-unknown { background: transparent; color: var(--unknown); border: 1px dotted var(--unknown); }
.alert-types { display: flex; flex-direction: column; gap: 2px; padding: 4px; }
.alert-type-row { display: flex; justify-content: space-between; text-align: left; }
.alert-count { font-weight: 600; color: var(--nan); }
.alert-row { grid-template-columns: 36px 14px minmax(60px, 2fr) minmax(40px, 1fr) auto 22px; gap: 4px; }
.alert-row.finding { grid-template-columns: 36px 14px minmax(50px, 1fr) minmax(80px, 3fr) auto 22px; }
.alert-evidence { font-size: 11px; }
.icon { vertical-align: -2px; flex: 0 0 auto; }
.alert-mute { padding: 0 2px; font-size: 11px; opacity: 0.75; border: none; background: none; cursor: pointer; }
.alert-row:hover .alert-mute { opacity: 1; }
.chip-rule { background: #f9a82533; }
.mutes { margin: 2px 4px; }
.mute-form { display: flex; flex-wrap: wrap; gap: 4px; align-items: center; padding: 4px; border: 1px solid var(--line); border-radius: 4px; }
.mute-reason { flex: 1 1 120px; min-width: 80px; }
.mute-chips { display: flex; flex-wrap: wrap; gap: 4px; }
.mute-chip { display: inline-flex; gap: 6px; align-items: center; padding: 1px 6px; border: 1px solid var(--line); border-radius: 10px; font-size: 11px; }
.unmute { border: none; background: none; cursor: pointer; padding: 0 2px; }
.rule-need { font-size: 11px; padding: 1px 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.health-map { position: absolute; left: 0; right: 0; top: 34px; bottom: 0; z-index: 20; background: var(--bg); display: flex; flex-direction: column; border-top: 1px solid var(--line); }
.health-map .panel-head { display: flex; gap: 8px; align-items: center; }
.health-map-legend { font-size: 11px; padding: 2px 8px; }
.health-map-scroll { flex: 1 1 0; overflow: auto; padding: 4px 8px; }
.health-map-canvas { cursor: crosshair; display: block; }
.health-map.docked { top: 50%; box-shadow: 0 -4px 12px rgba(0,0,0,.25); }
.health-map-filter { width: 12em; }
.health-map-tip { position: absolute; z-index: 2; max-width: 320px; white-space: pre-wrap; overflow-wrap: anywhere; pointer-events: none;
  background: var(--bg); color: var(--fg); border: 1px solid var(--line); border-radius: 4px; padding: 3px 6px; font-size: 11px; box-shadow: 0 2px 8px rgba(0,0,0,.2); }
.gs-spark { display: flex; gap: 6px; align-items: center; padding: 2px 6px; font-size: 11px; }
.health-map[hidden], .mute-form[hidden], .gs-spark[hidden] { display: none; }
.alert-row[data-role="producer"] .alert-op { font-weight: 700; }
.alert-op-wide { grid-column: span 2; } /* an op named after its type: one cell for name and type */
.alert-row[data-role="propagator"] { color: var(--muted); }
.role-producer { color: var(--nan); } .role-propagator { color: var(--muted); }
.rc-card { margin: 4px; padding: 6px 8px; border: 1px solid var(--line); border-left: 4px solid var(--muted); border-radius: 4px; background: var(--bg); }
.rc-card.rc-found { border-left-color: var(--nan); cursor: pointer; }
.rc-card.rc-found:hover { background: var(--sel); }
.rc-card.rc-clean { border-left-color: var(--ok); }
/* Not fully read yet: neutral, never the green all-clear. */
.rc-card.rc-clean_so_far, .rc-card.rc-reading { border-left-color: var(--info); color: var(--fg); }
.rc-copy { float: right; font-size: 10px; padding: 0 4px; margin-left: 6px; }
.rc-where-short { display: none; color: var(--link); }
.alert-unit { font-size: 10px; padding: 0 2px; }
/* A short Alerts pane: the card keeps what a decision needs — the op and its file:line on one line, then the
 * output's and each input's health (their chips, without the words) — and leaves the rest a click away. */
.panel.has-rc .panel-body { container-type: size; }
@container (max-height: 360px) {
  .rc-card { padding: 2px 6px; }
  .rc-card:not(.rc-found) { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  .rc-card .rc-title { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; margin: 0; }
  .rc-card .rc-title > .muted, .rc-card .rc-copy { display: none; }
  .rc-card .rc-where-short { display: inline; }
  .rc-card .rc-src, .rc-card.rc-found .rc-msg, .rc-card .rc-desc, .rc-card .rc-forward, .rc-card .rc-data,
  .rc-card .rc-skip, .rc-card .rc-note { display: none; }
  .rc-card .rc-line { flex-wrap: nowrap; overflow: hidden; white-space: nowrap; }
  .rc-card:not(.rc-found) .rc-title { display: inline; }
  .rc-card:not(.rc-found) .rc-msg { display: inline; margin-left: 6px; }
}
.tensor-detail { margin-top: 6px; font-size: 11px; }
.td-row { white-space: nowrap; } .td-key { display: inline-block; min-width: 84px; color: var(--muted); }
.runs-overview-open { font-size: 11px; }
.capsules-open { font-size: 11px; }
.capsules-panel { position: absolute; top: 100%; left: 8px; z-index: 21; max-height: 70vh; max-width: 90vw; overflow: auto; background: var(--panel); border: 1px solid var(--line); box-shadow: 0 4px 12px rgba(0,0,0,.2); padding: 4px 8px; font-size: 12px; }
.capsule-card { border-bottom: 1px solid var(--line); padding: 6px 0; display: flex; flex-direction: column; gap: 3px; }
.capsule-title { font-weight: 600; } .capsule-bad, .capsule-error, .capsule-trigger { color: var(--nan); }
.capsule-command-line { display: flex; gap: 4px; align-items: center; } .capsule-command { font-family: Menlo, Consolas, monospace; font-size: 11px; white-space: pre-wrap; word-break: break-all; }
.capsule-samples { border-collapse: collapse; } .capsule-samples td, .capsule-samples th { padding: 1px 6px; text-align: left; } .capsule-samples caption { text-align: left; color: var(--muted); }
.capsule-arrays { display: flex; flex-direction: column; gap: 2px; max-height: 9em; overflow: auto; } .capsule-array-row { display: flex; flex-wrap: wrap; gap: 3px; align-items: center; } .capsule-array-group { color: var(--muted); } .capsule-array { font-size: 11px; font-family: Menlo, Consolas, monospace; }
.capsule-sample { cursor: pointer; } .capsule-sample:hover { background: var(--hover, rgba(0,0,0,0.06)); }
.capsule-layers-grid { display: flex; gap: 6px; align-items: flex-start; } .capsule-layers-names { display: flex; flex-direction: column; max-width: 260px; min-width: 0; }
.capsule-layers-name { height: 13px; line-height: 13px; font-size: 10px; font-family: Menlo, Consolas, monospace; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; direction: rtl; text-align: right; } .capsule-layers-first { color: var(--nan); font-weight: 600; }
.capsule-layers-plot { position: relative; flex: none; } .capsule-layers-plot canvas { display: block; image-rendering: pixelated; } .capsule-layers-mark { position: absolute; border: 2px solid var(--fg); pointer-events: none; }
.capsule-layers-axis { display: flex; justify-content: space-between; font-size: 10px; }
.capsule-sample-tabs { display: flex; gap: 3px; } .capsule-tab-on { background: var(--sel); font-weight: 600; } .capsule-marked td { font-weight: 600; } .capsule-sample-pager { display: flex; gap: 6px; align-items: center; }
.runs-overview { position: absolute; top: 100%; left: 8px; z-index: 20; max-height: 60vh; overflow: auto; background: var(--panel); border: 1px solid var(--line); box-shadow: 0 4px 12px rgba(0,0,0,.2); }
.runs-table { border-collapse: collapse; font-size: 12px; }
.runs-table th, .runs-table td { padding: 3px 8px; text-align: left; white-space: nowrap; border-bottom: 1px solid var(--line); }
.runs-table th { cursor: pointer; color: var(--muted); } .runs-table th.sorted { color: var(--fg); }
.runs-table tbody tr { cursor: pointer; } .runs-table tbody tr:hover { background: var(--head); }
.runs-table tr.current { background: var(--sel); } .rc-card.rc-error { color: var(--muted); }
.rc-title { margin-bottom: 2px; } .rc-label { color: var(--nan); font-weight: 600; }
.rc-line { display: flex; flex-wrap: wrap; align-items: center; gap: 2px; margin: 1px 0; }
.rc-src { margin-top: 3px; display: flex; flex-direction: column; }
.rc-file { color: var(--link); } .rc-code { font-family: Menlo, Consolas, monospace; font-size: 11px; white-space: pre-wrap; word-break: break-all; }
.gs-toolbar { display: flex; align-items: center; gap: 4px; padding: 2px 4px; } .gs-hops { width: 3.5em; }
.gs-drawn { display: flex; flex-direction: column; height: 100%; min-height: 200px; position: relative; }
.gs-fit { position: absolute; right: 4px; top: 2px; z-index: 1; }
.gs-svg { flex: 1; width: 100%; min-height: 180px; cursor: grab; background: var(--bg); }
.gs-node rect { fill: var(--bg); stroke: var(--line); stroke-width: 1; }
.gs-node { cursor: pointer; } .gs-node:focus { outline: none; } .gs-node:focus rect { stroke: var(--link); stroke-width: 2; }
/* Health fills are theme colours: pale in light, deep in dark, so the names on them keep 4.5:1 in both. */
.gs-node.h-nonfinite rect { fill: var(--h-nonfinite); stroke: var(--nan); } .gs-node.h-finite rect { fill: var(--h-finite); }
.gs-node.h-contained rect { fill: var(--h-contained); stroke-dasharray: 3 2; } .gs-node.h-untraced rect { stroke-dasharray: 2 2; }
.gs-node.on-path rect { stroke: #e8710a; stroke-width: 3; } .gs-node.focused rect { stroke: var(--link); stroke-width: 3; }
.gs-node-name { font-size: 11px; font-weight: 600; fill: currentColor; } .gs-node-sub { font-size: 10px; fill: var(--muted); }
.gs-edge-line { fill: none; stroke: var(--muted); stroke-width: 1.2; } .gs-edge-line.cross { stroke-dasharray: 5 3; stroke: #e8710a; }
.gs-arrowhead { fill: var(--muted); }
.gs-legend { font-size: 11px; padding: 2px 4px; } .gs-legend-item { padding: 0 4px; margin-right: 4px; border-radius: 3px; }
.gs-legend-item.h-nonfinite { background: var(--h-nonfinite); } .gs-legend-item.h-finite { background: var(--h-finite); } .gs-legend-item.h-contained { background: var(--h-contained); }
.rc-note { color: var(--nan); font-size: 11px; } .rc-skip { font-size: 11px; } .rc-which { font-size: 11px; }
.alert-row[data-role="contained"], .alert-row[data-role="expected"] { color: var(--muted); opacity: 0.8; }
.role-unknown { color: var(--nan); } .role-contained, .role-expected { color: var(--muted); }
.rc-msg { margin-top: 3px; font-size: 11px; display: -webkit-box; -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden; }
.tl-minimap { position: relative; height: 14px; margin: 4px 6px; background: var(--head); border: 1px solid var(--line); cursor: pointer; flex: 0 0 auto; touch-action: none; }
.tl-marks { position: absolute; inset: 0; width: 100%; height: 100%; pointer-events: none; }
.tl-window { position: absolute; top: -1px; bottom: -1px; border: 1px solid var(--accent); background: rgba(245,124,0,.12); pointer-events: none; }
.tl-selection { position: absolute; top: -1px; bottom: -1px; background: rgba(25,118,210,.25); border: 1px dashed var(--accent); pointer-events: none; }
.tl-boxes { display: flex; flex-wrap: nowrap; overflow: hidden; gap: 2px; padding: 4px 6px; flex: 0 0 auto; outline: none; }
.tl-box { flex: 0 0 auto; min-width: 0; height: 22px; padding: 0 2px; font-weight: 600; color: #fff; border: 2px solid transparent; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; font-size: 11px; }
.tl-boxes.thin .tl-box { padding: 0; border: 0; border-radius: 0; }
.tl-boxes.thin .tl-box.alert { background: var(--nan); box-shadow: none; }
.tl-box.opened { box-shadow: inset 0 -4px 0 var(--accent); }
.tl-open-call { margin-left: 8px; }
.ge-call { display: inline-flex; align-items: center; gap: 2px; padding: 0 4px; border: 1px solid var(--accent); border-radius: 3px; white-space: nowrap; }
.ge-call[hidden] { display: none; }
.ge-call-close { border: none; background: none; padding: 0 2px; cursor: pointer; }
.tl-box.fn { background: var(--fn); } .tl-box.op { background: var(--op); color: var(--chip-fg); }
.tl-box.alert { border-color: var(--nan); box-shadow: 0 0 0 1px var(--nan); }
.tl-box.alert::after { content: ''; position: relative; }
.tl-box.selected { outline: 2px solid var(--accent); outline-offset: 1px; }
.tl-after { position: absolute; right: 4px; top: 0; font-size: 10px; line-height: 12px; color: var(--fg); background: var(--bg); padding: 0 3px; pointer-events: none; }
.tl-box.ran-focus { outline: 2px dashed var(--link); outline-offset: 1px; }
.tl-range { color: var(--muted); white-space: nowrap; }
.tl-detail { padding: 2px 8px; overflow: auto; flex: 1 1 0; }
.tl-detail-head { font-weight: 600; }
.tl-outputs { display: flex; flex-wrap: wrap; gap: 6px; }
.gs { overflow: auto; padding: 4px 8px; flex: 1 1 0; }
.gs-hint { margin: 4px 8px 0; padding: 3px 6px; border-radius: 3px; background: var(--sel); }
.gs-label { color: var(--muted); font-size: 11px; margin: 2px 0; }
.gs-edge { display: flex; align-items: center; gap: 6px; margin: 1px 0; }
.gs-edge.untraced .gs-op-link { border-style: dashed; }
.gs-slot { color: var(--muted); min-width: 44px; font-size: 11px; }
.gs-op-link { background: none; border: 1px solid var(--line); color: var(--link); max-width: 60%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.gs-center { border: 2px solid var(--accent); border-radius: 4px; padding: 4px 8px; margin: 2px 0; }
.gs-name { font-weight: 700; font-size: 13px; word-break: break-all; }
.gs-arrow { text-align: center; color: var(--muted); line-height: 12px; }
.gs-values { display: block; font-family: Menlo, Consolas, monospace; font-size: 11px; white-space: pre-wrap; word-break: break-all; }
.no-trace { color: var(--accent); font-style: italic; }
.source-path { padding: 2px 6px; color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; flex: 0 0 auto; }
.source-picker { max-width: 260px; }
.source-editor { flex: 1 1 0; min-height: 0; overflow: hidden; }
.source-editor .cm-editor { height: 100%; background: var(--bg); color: var(--fg); }
.source-editor .cm-scroller { font-family: Menlo, Consolas, monospace; font-size: 12px; }
.source-editor .cm-gutters { background: var(--head); color: var(--muted); border-right: 1px solid var(--line); }
.cm-op-line { box-shadow: inset 3px 0 0 var(--op); }
.cm-focus-line { background: var(--focus) !important; }
.cm-ops-gutter .cm-gutterElement { padding: 0 2px; }
.cm-ops-marker { font: 600 10px/14px Menlo, Consolas, monospace; min-width: 22px; padding: 0 3px; margin: 0; border: 1px solid var(--op);
  border-radius: 7px; background: var(--bg); color: var(--op); cursor: pointer; }
.cm-ops-marker.through { border-style: dashed; }
.cm-ops-marker.nonfinite { background: var(--nan); border-color: var(--nan); color: var(--chip-fg); }
.cm-ops-marker:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
.line-ops-pop { position: absolute; z-index: 10; min-width: 280px; max-width: min(560px, 95%); max-height: 60%; display: flex;
  flex-direction: column; background: var(--panel); border: 1px solid var(--line); border-radius: 4px; box-shadow: 0 4px 16px rgba(0,0,0,.25); }
.line-ops-pop[hidden] { display: none; }
.line-ops-head { display: flex; gap: 8px; align-items: center; padding: 3px 6px; background: var(--head); border-bottom: 1px solid var(--line); }
.line-ops-what { flex: 1 1 auto; color: var(--muted); } .line-ops-close { padding: 0 6px; }
.line-ops-list { list-style: none; margin: 0; padding: 2px 0; overflow: auto; flex: 1 1 auto; }
.line-op { display: flex; gap: 8px; width: 100%; text-align: left; background: none; border: 0; padding: 2px 8px; cursor: pointer; color: var(--fg); }
.line-op:hover, .line-op:focus-visible { background: var(--sel); }
.line-op-mark { width: 1em; } .line-op-mark.h-nonfinite { color: var(--nan); } .line-op-mark.h-untraced { color: var(--muted); }
.line-op-name { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; flex: 1 1 auto; min-width: 0; }
.line-op-type { color: var(--link); } .line-op-graph, .line-op-how { color: var(--muted); font-size: 11px; white-space: nowrap; }
.line-ops-foot { padding: 2px 8px; } .line-ops-foot:empty { display: none; } .line-ops-error { color: var(--nan); }
.stack-list { list-style: none; margin: 0; padding: 2px 0; overflow: auto; flex: 1 1 0; outline: none; }
.stack-frame { display: flex; gap: 8px; padding: 2px 8px; cursor: pointer; white-space: nowrap; }
.stack-frame.library { color: var(--muted); font-size: 11px; }
.stack-frame.user { font-weight: 600; }
.stack-frame.selected { background: var(--focus); }
.stack-frame:hover { background: var(--head); }
.frame-file { color: var(--link); } .stack-frame.library .frame-file { color: var(--muted); }
.stack-fold { padding: 2px 8px; color: var(--muted); font-style: italic; cursor: pointer; }
.stack-fold:hover { background: var(--head); }
`;
