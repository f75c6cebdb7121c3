/** The Tensor Values pane's CSS (appended to the dashboard's, styles.ts). */
export const TENSOR_CSS = `
.tv-pane { position: fixed; top: 34px; left: 6px; right: 6px; bottom: 6px; z-index: 30; display: flex; flex-direction: column;
  background: var(--panel); border: 1px solid var(--line); border-radius: 4px; box-shadow: 0 6px 24px rgba(0,0,0,.3); outline: none; }
.tv-pane[hidden] { display: none; }
.tv-head { display: flex; align-items: center; gap: 10px; padding: 4px 8px; background: var(--head); border-bottom: 1px solid var(--line); flex-wrap: wrap; }
.tv-title { flex: 1 1 auto; min-width: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tv-shape { font-family: Menlo, Consolas, monospace; }
.tv-dims { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
.tv-fixed { display: inline-flex; gap: 4px; align-items: center; }
.tv-fixed-range { width: 90px; } .tv-fixed-num { width: 56px; }
.tv-download { color: var(--link); white-space: nowrap; }
.tv-close { font-size: 16px; line-height: 16px; padding: 0 8px; }
.tv-note { padding: 4px 8px; border-bottom: 1px solid var(--line); }
.tv-note[hidden] { display: none; }
.tv-error { color: var(--nan); }
.tv-body { display: flex; flex: 1 1 0; min-height: 0; }
.tv-main { flex: 1 1 0; min-width: 0; display: flex; flex-direction: column; position: relative; }
.tv-grid-status { position: absolute; right: 8px; bottom: 4px; z-index: 2; font-style: italic; }
.tv-side { flex: 0 0 340px; overflow: auto; border-left: 1px solid var(--line); padding: 4px 8px; }
.tv-section { margin-bottom: 8px; }
.tv-label { font-weight: 600; margin: 2px 0; }
.tv-heat { width: 320px; max-height: 260px; image-rendering: pixelated; cursor: crosshair; border: 1px solid var(--line); }
.tv-legend { display: flex; gap: 4px; align-items: center; flex-wrap: wrap; font-size: 11px; }
.tv-ramp { display: inline-block; width: 90px; height: 10px; border: 1px solid var(--line); }
.tv-swatch { display: inline-block; width: 10px; height: 10px; margin-left: 6px; }
.tv-hist-axis { display: flex; justify-content: space-between; width: 300px; font-size: 11px; }
.tv-stats { border-collapse: collapse; font-family: Menlo, Consolas, monospace; font-size: 11px; }
.tv-stats th { text-align: left; font-weight: normal; color: var(--muted); padding: 0 6px 0 0; }
.tv-stats td { padding: 0 14px 0 0; }
.tv-positions { display: flex; flex-wrap: wrap; gap: 3px; max-height: 120px; overflow: auto; }
.tv-pos { font-family: Menlo, Consolas, monospace; font-size: 11px; color: var(--nan); }
.tv-axis { font-size: 11px; }
.v-nan { color: var(--nan); font-weight: 600; } .v-posinf { color: var(--posinf); font-weight: 600; }
.v-neginf { color: var(--neginf); font-weight: 600; } .v-zero { color: var(--muted); }
.vg { position: relative; flex: 1 1 0; min-height: 0; font-family: Menlo, Consolas, monospace; font-size: 11px; }
.vg-scroller { position: absolute; inset: 0; overflow: auto; }
.vg-layer { position: absolute; left: 0; top: 0; overflow: hidden; }
.vg-spacer { pointer-events: none; }
.vg-layer > div { position: absolute; left: 0; top: 0; width: 84px; height: 20px; line-height: 20px; padding: 0 4px;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; text-align: right; border-right: 1px solid var(--line); border-bottom: 1px solid var(--line); }
.vg-layer > .vg-head { background: var(--head); color: var(--muted); }
.vg-layer > .vg-rowhead { width: 48px; }
.vg-cell.v-nan { background: rgba(216, 27, 96, .14); } .vg-cell.v-posinf { background: rgba(255, 111, 0, .14); }
.vg-cell.v-neginf { background: rgba(0, 172, 193, .14); }
.vg-layer > .vg-focus { outline: 2px solid var(--accent); outline-offset: -2px; background: var(--focus); }
.tv-inputs { border-top: 1px solid var(--line); padding: 4px 8px; max-height: 190px; overflow: auto; }
.tv-input-row { display: flex; gap: 8px; overflow-x: auto; }
.tv-input { flex: 0 0 300px; border: 1px solid var(--line); border-radius: 3px; padding: 4px; background: var(--bg); }
.tv-input-head { display: flex; justify-content: space-between; gap: 6px; }
.tv-input-desc { white-space: normal; }
.tv-input-heat { width: 120px; height: 60px; image-rendering: pixelated; border: 1px solid var(--line); }
.tv-open-btn { font-size: 11px; padding: 0 4px; margin-left: 4px; line-height: 14px; }
.ge-health { display: flex; gap: 2px; align-items: center; min-width: 0; overflow: hidden; }
.ge-health > .tv-open-btn { order: -1; flex: 0 0 auto; margin: 0 2px 0 0; }
`;
