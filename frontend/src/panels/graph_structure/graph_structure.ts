/**
 * Graph Structure panel: the focused op in the middle (bold), the ops feeding its inputs above (with slots), the
 * ops consuming its outputs below. Clicking one navigates there and moves Graph Execution to its nearest trace;
 * an input the dump did not trace says so instead of highlighting nothing. For an eager execution it shows the
 * execution's op, inputs and outputs.
 */
import { graphKind, noTraceReason } from '../../widgets/graph_names.ts';
import type { Controller } from '../../controller/controller.ts';
import type { State } from '../../store/store.ts';
import type {
  ExecutionDetail,
  Framework,
  GraphRef,
  NeighborhoodResponse,
  OpInfo,
  OpSummary,
  TensorValue,
  TraceIndices,
} from '../../api/wire.ts';
import { Panel, el } from '../../widgets/panel.ts';
import { numText, renderHealth } from '../../widgets/health.ts';
import { noRunState } from '../../widgets/notices.ts';
import { drawCells, prepareCanvas } from '../../widgets/health_cells.ts';
import { renderTensorDetail } from '../../widgets/tensor_detail.ts';
import { nearestBefore } from '../../store/focus_math.ts';
import { DrawnGraphView } from './drawn_graph.ts';
import { compareLegend, nameLegend, nodeDifferences, paintDifferences } from './compare_paint.ts';
import { maximiseButton } from './maximise.ts';
import { LayoutClient } from './layout_client.ts';
import { ordinal } from '../../widgets/ordinal.ts';

/** How many neighbourhoods' scope choices the panel remembers (Back and forth over a walk finds them again). */
const KEPT_CHOICES = 32;

/** "in `loss` (tf.function)": the innermost named graph of the chain (the outermost graph of a tf.function has no
 * name in the dump; its UUID says nothing to a person), else a short id. A JAX run's graphs are jitted functions. */
export function graphLabel(chain: GraphRef[], graphId: string, framework: Framework = 'tensorflow'): string {
  const named = chain.filter((g) => g.name);
  if (named.length) return `in ${named.map((g) => g.name).join(' › ')} (${graphKind(named.at(-1)!.name, framework)})`;
  return `in graph ${graphId.slice(0, 8)}…`;
}

function traceNote(t: TraceIndices, framework: Framework): HTMLElement {
  if (t.count === 0) {
    const n = el('span', 'no-trace', 'no trace');
    n.title = noTraceReason(framework);
    return n;
  }
  return el('span', 'muted', `${t.count.toLocaleString('en-US')} trace${t.count === 1 ? '' : 's'}`);
}

/** FULL_TENSOR: the first elements of the focused trace's value (the route slices it; never the whole tensor). */
function valuePreview(v: TensorValue): HTMLElement {
  const box = el('div', 'gs-section gs-value');
  box.dataset.testid = 'gs-value';
  const shown = v.values
    .slice(0, 64)
    .map((x) =>
      typeof x === 'number' || typeof x === 'string'
        ? typeof x === 'string' && !['NaN', 'Infinity', '-Infinity'].includes(x)
          ? JSON.stringify(x)
          : numText(x)
        : String(x),
    );
  box.append(
    el(
      'div',
      'gs-label',
      `Value ${v.dtype} [${v.shape.join(',')}] · ${v.size.toLocaleString('en-US')} elements${v.size > shown.length ? `, first ${shown.length}` : ''}`,
    ),
    el('code', 'gs-values', shown.join('  ') + (v.size > shown.length ? '  …' : '')),
  );
  return box;
}

export class GraphStructurePanel {
  readonly panel = new Panel('Graph Structure', 'panel-graph-structure');
  private content = el('div', 'gs');
  private hint = el('div', 'gs-hint');
  private spark = el('div', 'gs-spark');
  private sparkCanvas = el('canvas', 'gs-spark-canvas');
  private sparkText = el('span', 'muted');
  private toolbar = el('div', 'gs-toolbar');
  private modeButton = el('button', 'gs-mode');
  private hopsInput = el('input', 'gs-hops');
  /** "hops" before the input: hidden with it (a list shows no neighbourhood to size). */
  private hopsLabel = el('span', 'muted', ' hops ');
  private maximise = maximiseButton(this.panel.element);
  private drawn: { data: NeighborhoodResponse; focusId: string; node: HTMLElement; view: DrawnGraphView } | null = null;
  /** The comparison's ring legend under the drawing (#27). */
  private readonly cmpLegend = compareLegend();
  /** One layout worker for the panel's drawings (a newer drawing's layout makes an older one's stale). */
  private readonly layouts = new LayoutClient();
  /**
   * Which name scopes the user opened or closed, per neighbourhood (run, op, hops). Kept here, not in the store:
   * it is presentation only (no request, no other panel and no permalink depends on it), like the pan and zoom.
   */
  private readonly scopeChoices = new Map<string, Map<string, boolean>>();

  constructor(private readonly ctl: Controller) {
    this.hint.dataset.testid = 'gs-hint';
    this.spark.dataset.testid = 'op-sparkline';
    this.spark.append(this.sparkText, this.sparkCanvas);
    this.spark.hidden = true;
    this.buildToolbar();
    this.panel.body.append(this.toolbar, this.hint, this.spark, this.content);
    // One Tab stop: the panel; Up/Down move between its op links, Enter follows one.
    this.content.tabIndex = 0;
    this.content.addEventListener('keydown', (e) => this.onKey(e));
    ctl.store.subscribe((s, prev) => {
      if (s.opHealth !== prev.opHealth || s.op !== prev.op) this.renderSpark(s);
      if (s.compareNodes !== prev.compareNodes || s.compare !== prev.compare) this.paintCompared(s);
      if (
        s.op !== prev.op ||
        s.neighborhood !== prev.neighborhood ||
        s.graphView !== prev.graphView ||
        s.hint !== prev.hint ||
        s.focusDetail !== prev.focusDetail ||
        s.focus !== prev.focus ||
        s.run !== prev.run ||
        (s.geRows !== prev.geRows && s.op.data !== null) ||
        (s.run === null && s.runs !== prev.runs)
      )
        this.render(s);
    });
    this.render(ctl.store.state);
  }

  /** The focused op's health across its steps (the health map's row of this op): NaN/∞ red, zeros darker. */
  private renderSpark(s: State): void {
    const m = s.opHealth.data;
    const op = s.op.data;
    const row = m && op ? m.rows.find((r) => r.op_name === op.op_name && r.graph_id === op.graph_id) : undefined;
    this.spark.hidden = !row || s.focus?.kind !== 'graph_execution';
    if (!row || !m) return;
    const first = row.first_nonfinite_step;
    this.sparkText.textContent =
      `health over ${row.steps.toLocaleString('en-US')} trace(s)` +
      (first !== null ? ` · first NaN/∞ at its ${ordinal(first + 1)} trace` : ' · never NaN/∞');
    this.spark.dataset.firstNonfinite = first === null ? '' : String(first);
    const w = Math.max(2, Math.floor(240 / Math.max(m.columns, 1)));
    const ctx = prepareCanvas(this.sparkCanvas, w * m.columns, 12);
    if (ctx) drawCells(ctx, row, 0, 0, w, 13);
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const links = [...this.content.querySelectorAll<HTMLElement>('.gs-op-link')];
    if (!links.length) return;
    e.preventDefault();
    const at = links.indexOf(document.activeElement as HTMLElement);
    const next = at < 0 ? 0 : Math.min(Math.max(at + (e.key === 'ArrowDown' ? 1 : -1), 0), links.length - 1);
    links[next]!.focus();
  }

  /** Which framework wrote the shown run (its graphs' kind and what has no trace depend on it). */
  private framework(): Framework {
    return this.ctl.store.runInfo()?.framework ?? 'tensorflow';
  }

  /** List / drawn mode and the hops (1–8) of the drawn neighbourhood. */
  private buildToolbar(): void {
    this.modeButton.dataset.testid = 'gs-mode';
    this.modeButton.addEventListener('click', () => {
      const mode = this.ctl.store.state.graphView.mode === 'drawn' ? 'list' : 'drawn';
      this.ctl.setGraphView({ mode });
    });
    Object.assign(this.hopsInput, { type: 'number', min: '1', max: '8', title: 'hops around the op' });
    this.hopsInput.dataset.testid = 'gs-hops';
    this.hopsInput.addEventListener('change', () => {
      this.ctl.setGraphView({ hops: Number(this.hopsInput.value) });
      this.hopsInput.value = String(this.ctl.store.state.graphView.hops); // as clamped (the render skips a focused field)
    });
    this.toolbar.append(this.modeButton, this.hopsLabel, this.hopsInput, this.maximise);
  }

  private opButton(graphId: string, name: string, op: OpSummary | null, testid: string): HTMLElement {
    const b = el('button', 'gs-op-link', name);
    b.tabIndex = -1;
    b.dataset.testid = testid;
    b.title = op ? `${op.op_type} in graph ${graphId}` : 'not in the graphs file';
    b.addEventListener('click', () => void this.ctl.navigateToOp(op?.graph_id ?? graphId, name));
    return b;
  }

  private render(s: State): void {
    this.hint.textContent = s.hint ?? '';
    this.hint.hidden = !s.hint;
    if (s.run === null) return this.panel.setState(noRunState(s));
    if (s.focus?.kind === 'execution' && s.focusDetail.data && 'input_tensor_ids' in s.focusDetail.data) {
      return this.renderExecution(s.focusDetail.data);
    }
    const op = s.op;
    if (op.status === 'idle') {
      this.content.replaceChildren();
      return this.panel.setState({
        kind: 'empty',
        text:
          s.focus?.kind === 'execution'
            ? 'Loading the execution…'
            : 'Select a trace or an alert to see its op, its inputs and its consumers.',
      });
    }
    if (op.status === 'loading' && !op.data) return this.panel.setState({ kind: 'loading' });
    if (op.status === 'error')
      return this.panel.setState({ kind: 'error', text: `Could not load the op: ${op.error}` });
    const view = s.graphView;
    this.modeButton.textContent = view.mode === 'drawn' ? 'List' : 'Draw graph';
    // not while the user edits it: a render in between (an answer arriving, a poll) would undo what was typed
    if (document.activeElement !== this.hopsInput) this.hopsInput.value = String(view.hops);
    this.hopsInput.hidden = view.mode !== 'drawn';
    this.hopsLabel.hidden = this.hopsInput.hidden;
    this.maximise.hidden = view.mode !== 'drawn';
    if (op.data && view.mode === 'drawn') return this.renderDrawn(s, `${op.data.graph_id}:${op.data.op_name}`);
    if (op.data) this.renderOp(op.data, s);
    const d = s.focusDetail.data;
    if (d && 'graph_chain' in d && s.focus?.kind === 'graph_execution' && op.data?.op_name === d.op_name) {
      this.content.append(renderTensorDetail(`Tensor ${d.op_name}:${d.output_slot} (#${d.index})`, d.health));
    }
    if (d && 'value' in d && d.value && s.focus?.kind === 'graph_execution' && op.data?.op_name === d.op_name) {
      this.content.append(valuePreview(d.value));
    }
    this.panel.setState(op.status === 'loading' ? { kind: 'loading' } : { kind: 'content' });
  }

  /** The health of an input's trace nearest before the focus, if that row is among the list's fetched rows. */
  private inputHealth(s: State, indices: number[]): unknown {
    const near = s.focus?.kind === 'graph_execution' ? s.focus.index : null;
    const idx = nearestBefore(indices, near);
    if (idx === null) return null;
    const pos = s.geRows.positionOf((r) => r.index === idx);
    return pos === null ? null : (s.geRows.item(pos)?.health ?? null);
  }

  private renderDrawn(s: State, focusId: string): void {
    const n = s.neighborhood;
    if (n.status === 'error')
      return this.panel.setState({ kind: 'error', text: `Could not load the graph: ${n.error}` });
    if (!n.data) return this.panel.setState({ kind: 'loading' });
    if (this.drawn?.data === n.data && this.drawn.focusId === focusId && this.content.contains(this.drawn.node)) {
      return this.panel.setState(n.status === 'loading' ? { kind: 'loading' } : { kind: 'content' });
    }
    const op = s.op.data;
    const head = el('div', 'gs-center gs-drawn-head');
    head.dataset.testid = 'gs-focus-op';
    // the op type only where it says more than the name (no "Log Log")
    const type = op && op.op_type !== op.op_name ? ` ${op.op_type}` : '';
    head.append(el('span', 'gs-name', op?.op_name ?? ''), el('span', 'muted', type));
    const view = new DrawnGraphView(
      n.data,
      focusId,
      this.choicesFor(`${n.data.run}|${focusId}|${n.data.hops}`),
      {
        focusOp: (graphId, opName) => void this.ctl.navigateToOp(graphId, opName),
        focusExecution: (index) => void this.ctl.focusExecution(index),
      },
      this.layouts,
    );
    const drawing = view.element;
    // kept while the answer is the same: a re-render for another reason must not reset the user's pan and zoom
    this.drawn = { data: n.data, focusId, node: drawing, view };
    const legend = drawing.querySelector('.gs-legend'); // the rings' legend first: it says what the colours mean
    if (legend) legend.before(this.cmpLegend);
    else drawing.append(this.cmpLegend);
    view.overlay((content) => paintDifferences(content, nodeDifferences(this.ctl.store.state)));
    this.paintCompared(s);
    this.content.replaceChildren(head, drawing);
    this.panel.setState(n.status === 'loading' ? { kind: 'loading' } : { kind: 'content' });
  }

  /** The drawn nodes' rings and the legend follow the comparison and its answer for the nodes (#27). */
  private paintCompared(s: State): void {
    const differences = nodeDifferences(s);
    this.cmpLegend.hidden = differences === null;
    nameLegend(this.cmpLegend, s.compareBase);
    if (this.drawn)
      this.drawn.view.overlay((content) => paintDifferences(content, nodeDifferences(this.ctl.store.state)));
  }

  /** The scope choices of one neighbourhood (the most recently drawn ones kept). */
  private choicesFor(key: string): Map<string, boolean> {
    const choices = this.scopeChoices.get(key) ?? new Map<string, boolean>();
    this.scopeChoices.delete(key);
    this.scopeChoices.set(key, choices);
    for (const old of this.scopeChoices.keys()) {
      if (this.scopeChoices.size <= KEPT_CHOICES) break;
      this.scopeChoices.delete(old);
    }
    return choices;
  }

  private renderOp(op: OpInfo, s: State): void {
    const inputs = el('div', 'gs-section gs-inputs');
    inputs.append(el('div', 'gs-label', op.inputs.length ? 'Inputs' : 'No data inputs'));
    for (const input of op.inputs) {
      const row = el('div', 'gs-edge' + (input.traces.count === 0 ? ' untraced' : ''));
      row.dataset.testid = 'gs-input';
      row.append(
        el('span', 'gs-slot', `in ${input.slot}`),
        this.opButton(op.graph_id, input.op_name, input.op, 'gs-input-op'),
        el(
          'span',
          'muted',
          `:${input.output_slot}${input.op && input.op.op_type !== input.op_name ? ' · ' + input.op.op_type : ''}`,
        ),
        traceNote(input.traces, this.framework()),
      );
      const health = this.inputHealth(s, input.traces.indices);
      if (health) row.append(renderHealth(health, { opType: op.op_type, slot: input.slot }));
      inputs.append(row);
    }
    const center = el('div', 'gs-center');
    center.dataset.testid = 'gs-focus-op';
    const name = el('div', 'gs-name', op.op_name);
    const meta = el(
      'div',
      'muted',
      `${op.op_type !== op.op_name ? op.op_type + ' · ' : ''}${op.num_outputs} output${op.num_outputs === 1 ? '' : 's'} · ${graphLabel(op.graph_chain, op.graph_id, this.framework())}`,
    );
    meta.title = `graph ${op.graph_id}`;
    center.append(name, meta, traceNote(op.traces, this.framework()));
    const consumers = el('div', 'gs-section gs-consumers');
    const total = op.consumers.reduce((n, c) => n + c.consumers.length, 0);
    consumers.append(el('div', 'gs-label', total ? 'Consumers' : 'No consumers'));
    for (const slot of op.consumers) {
      for (const c of slot.consumers) {
        const row = el('div', 'gs-edge' + (c.traces.count === 0 ? ' untraced' : ''));
        row.dataset.testid = 'gs-consumer';
        row.append(
          el('span', 'gs-slot', `out ${slot.output_slot} → in ${c.input_slot}`),
          this.opButton(op.graph_id, c.op_name, c.op, 'gs-consumer-op'),
          el('span', 'muted', c.op && c.op.op_type !== c.op_name ? c.op.op_type : ''),
          traceNote(c.traces, this.framework()),
        );
        consumers.append(row);
      }
    }
    this.content.replaceChildren(inputs, el('div', 'gs-arrow', '↓'), center, el('div', 'gs-arrow', '↓'), consumers);
  }

  private renderExecution(ex: ExecutionDetail): void {
    const center = el('div', 'gs-center');
    center.dataset.testid = 'gs-focus-op';
    center.append(
      el('div', 'gs-name', ex.op_type),
      el(
        'div',
        'muted',
        `eager ${ex.is_function ? 'function call' : 'op'} #${ex.index} · ${ex.tensor_debug_mode}${ex.graph_name ? ' · graph ' + ex.graph_name : ''}`,
      ),
    );
    const inputs = el('div', 'gs-section');
    inputs.append(el('div', 'gs-label', `Input tensor ids: ${ex.input_tensor_ids.join(', ') || 'none'}`));
    const outputs = el('div', 'gs-section');
    outputs.append(el('div', 'gs-label', ex.num_outputs ? 'Outputs' : 'No outputs'));
    for (let i = 0; i < ex.num_outputs; i++) {
      const row = el('div', 'gs-edge');
      row.dataset.testid = 'gs-output';
      row.append(el('span', 'gs-slot', `out ${i}`), el('span', 'muted', `tensor ${ex.output_tensor_ids[i] ?? '?'}`));
      const health = ex.outputs[i] ?? { mode: 'UNKNOWN', reason: 'no entry recorded for this output' };
      row.append(renderHealth(health));
      outputs.append(row, renderTensorDetail(`Output ${i} (tensor ${ex.output_tensor_ids[i] ?? '?'})`, health));
    }
    this.content.replaceChildren(inputs, el('div', 'gs-arrow', '↓'), center, el('div', 'gs-arrow', '↓'), outputs);
    this.panel.setState({ kind: 'content' });
  }
}
