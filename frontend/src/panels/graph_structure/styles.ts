/** Graph Structure's drawn graph: scope boxes, collapsed scopes, device badges, merged edges' counts, the layout's
 * status (the panel's base styles are in src/styles.ts; these come after them, so they win ties). */
export const GRAPH_CSS = `
.gs-drawn-tools { position: absolute; right: 4px; top: 2px; z-index: 1; display: flex; gap: 4px; }
.gs-drawn-tools .gs-fit { position: static; }
.gs-layout-status { position: absolute; left: 6px; top: 4px; z-index: 1; font-size: 11px; color: var(--muted); background: var(--bg); padding: 0 4px; }
.gs-group-box { fill: var(--head); fill-opacity: .45; stroke: var(--line); stroke-width: 1; }
.gs-group-head { cursor: pointer; } .gs-group-head rect { fill: var(--head); stroke: var(--line); }
.gs-group-head:focus { outline: none; } .gs-group-head:focus rect { stroke: var(--link); stroke-width: 2; }
.gs-group-label { font-size: 10px; fill: var(--muted); font-weight: 600; }
.gs-svg .gs-node rect.gs-group-stack { fill: var(--bg); stroke: var(--line); stroke-width: 1; stroke-dasharray: none; }
.gs-svg .gs-node .gs-device > rect { fill: var(--head); stroke: var(--muted); stroke-width: .6; stroke-dasharray: none; }
.gs-device-text { font-size: 10px; fill: var(--fg); font-family: Menlo, Consolas, monospace; }
.panel.gs-maximised { position: fixed; inset: 40px 12px 12px; z-index: 40; border: 1px solid var(--line);
  box-shadow: 0 6px 24px rgba(0,0,0,.35); }
.gs-maximise[hidden] { display: none; }
.gs-pan-hint { position: absolute; left: 6px; bottom: 4px; z-index: 1; font-size: 11px; color: var(--fg); background: var(--bg); padding: 0 4px; border-radius: 3px; }
.gs-edge-count { font-size: 10px; fill: var(--muted); }
`;
