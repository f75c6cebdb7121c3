/** The comparison's marks in run B's own panels (#27): Graph Execution's difference column and Graph Structure's
 * difference rings and legend. Colours are the theme's variables (AA contrast in both themes, as every text). */
export const COMPARE_CSS = `
.compare-card[hidden] { display: none; }
.compare-card.folded { display: flex; align-items: center; gap: 6px; flex: 0 0 auto; }
.compare-card.folded > :not(.cmp-head):not(button) { display: none; }
.cmp-code { white-space: pre-wrap; overflow-wrap: anywhere; margin: 2px 0 4px; }
.cmp-tol { display: flex; flex-wrap: wrap; gap: 2px 6px; align-items: center; margin: 2px 0 4px; }
.cmp-tol-input { width: 7em; font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: 3px; padding: 0 3px; }
.cmp-tol-input.cmp-tol-bad { border-color: var(--nan); outline: 1px solid var(--nan); }
.compare-card.folded .cmp-head { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.ge-compared .ge-row { grid-template-columns: 52px minmax(60px, 1.6fr) minmax(140px, 1.8fr) minmax(80px, 1.3fr) minmax(40px, 1fr) 24px minmax(0, 52px) minmax(0, 70px) minmax(0, 48px); }
/* Comparing in a Graph Execution narrower than all its columns (its share of a 1440 px screen or less): slot, dtype,
   shape and device go first (they read "floa…", "CP…" there), so the op name and the Δ cell keep room to be read */
.ge-compared { container-type: inline-size; }
/* the health cell keeps room for its "values" button and a count chip or two (at 100 px it read "2 more", at 96 "…") */
@container (max-width: 760px) {
  .ge-compared .ge-row { grid-template-columns: 40px minmax(60px, 1fr) minmax(130px, 1.1fr) minmax(150px, 1.6fr) minmax(36px, 0.5fr); }
  .ge-compared .ge-slot, .ge-compared .ge-dtype, .ge-compared .ge-shape, .ge-compared .ge-device { display: none; }
}
/* a 1024 px screen: the op type goes too (the op name's title and Graph Structure name it), the Δ cell stays whole */
@container (max-width: 420px) {
  .ge-compared .ge-row { grid-template-columns: 34px minmax(50px, 0.7fr) minmax(118px, 0.9fr) minmax(110px, 1.5fr); }
  .ge-compared .ge-type { display: none; }
}
.ge-diff-head[hidden], .filter-divergent[hidden] { display: none; }
.ge-diff { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-variant-numeric: tabular-nums; }
.ge-diff-differs { color: var(--nan); } .ge-diff-differs .cmp-mark { font-weight: bold; cursor: help; }
.ge-diff-same { color: var(--muted); } .ge-diff-only_in_b { color: var(--muted); font-style: italic; }
/* !important: the health fills (.gs-node.h-finite rect) match the ring too, and a filled ring hides the labels */
.gs-cmp-ring { fill: none !important; stroke-width: 2.5; pointer-events: none; }
.gs-node.cmp-differs .gs-cmp-ring { stroke: var(--nan); }
.gs-node.cmp-same .gs-cmp-ring { stroke: var(--ok); }
.gs-node.cmp-only_in_b .gs-cmp-ring { stroke: var(--muted); stroke-dasharray: 4 3; }
.gs-node.cmp-first .gs-cmp-ring { stroke-width: 5; }
.gs-cmp-first-label { font-size: 10px; font-weight: 700; fill: var(--nan); }
.gs-cmp-legend { font-size: 11px; padding: 2px 4px; color: var(--muted); }
.gs-cmp-legend[hidden] { display: none; }
.gs-cmp-swatch { display: inline-block; width: 12px; height: 9px; margin: 0 3px 0 8px; border: 2.5px solid var(--line); border-radius: 2px; vertical-align: middle; }
.gs-cmp-swatch.cmp-differs { border-color: var(--nan); } .gs-cmp-swatch.cmp-same { border-color: var(--ok); }
.gs-cmp-swatch.cmp-only_in_b { border-color: var(--muted); border-style: dashed; }
`;
