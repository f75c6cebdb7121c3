/**
 * The Root cause card at the top of Alerts: the first op that produced a non-finite tensor, its output health,
 * each input's health (or "not traced"), and the user's source line. One click focuses everything on it.
 *
 * While the run is still being read, a run without NaN/∞ so far is said so in a neutral colour ("clean_so_far"),
 * never as a green all-clear. "Copy as text" copies the report's own section for the run (the route carries it):
 * the dashboard and `python -m tensorboard_plugin_dbg report` say the same words. In a short pane the card is one
 * line (styles.ts: a container query on the Alerts panel's body).
 */
import type { Framework, RootCauseResponse, StackFrame } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';
import { renderHealth } from '../../widgets/health.ts';
import { baseName } from '../stack_trace/fold.ts';
import { graphKind, graphKindShort } from '../../widgets/graph_names.ts';
import { ordinal } from '../../widgets/ordinal.ts';

const TITLES: Record<string, string> = {
  clean: 'No non-finite values',
  clean_so_far: 'No NaN/∞ so far (still reading)',
  reading: 'Reading…',
  unknown: 'Root cause unknown',
};

function copyButton(text: string): HTMLElement {
  const b = el('button', 'rc-copy', 'copy as text');
  b.dataset.testid = 'rc-copy';
  b.dataset.text = text;
  b.title = 'Copy the report of this run (the same text as `python -m tensorboard_plugin_dbg report`)';
  b.addEventListener('click', (e) => {
    e.stopPropagation();
    void navigator.clipboard?.writeText(text).then(
      () => (b.textContent = 'copied'),
      () => (b.textContent = 'copy failed: select the text of the report instead'),
    );
  });
  return b;
}

type Producer = NonNullable<RootCauseResponse['producer']>;

/** `framework`: the run's (RunInfo.framework): a JAX run's graphs are jitted functions, not tf.functions. */
export function renderRootCause(
  rc: RootCauseResponse,
  onFocus: () => void,
  onValues: () => void,
  framework: Framework = 'tensorflow',
): HTMLElement {
  const card = el('div', `rc-card rc-${rc.status}`);
  card.dataset.testid = 'root-cause';
  card.dataset.status = rc.status;
  const p = rc.producer;
  if (rc.status !== 'found' || !p) return statusCard(card, rc);
  card.append(titleLine(rc, p, onValues, framework), outputLine(p));
  card.append(...forwardLines(p), ...dataLines(p), ...inputLines(p));
  if (p.user_frame) card.append(sourceLine(p.user_frame, p.source_line, p.forward ? 'during' : '', 'rc-source'));
  card.append(...footLines(rc));
  focusable(card, onFocus);
  return card;
}

/** No producer (clean, still reading, unknown): the status and the server's message. */
function statusCard(card: HTMLElement, rc: RootCauseResponse): HTMLElement {
  const title = el('div', 'rc-title', TITLES[rc.status] ?? 'Root cause unknown');
  if (rc.report_text) title.append(copyButton(rc.report_text));
  const msg = el('div', 'rc-msg', rc.message);
  msg.title = rc.message;
  card.append(title, msg);
  return card;
}

/** "Root cause: op type in graph (kind) · execution n · file:line", copy and values buttons. */
function titleLine(rc: RootCauseResponse, p: Producer, onValues: () => void, framework: Framework): HTMLElement {
  const title = el('div', 'rc-title');
  title.append(
    el('span', 'rc-label', p.role === 'unknown' ? 'First NaN/∞ (inputs not recorded): ' : 'Root cause: '),
    el('b', 'rc-op', p.op_name ?? p.op_type),
  );
  // The op type only where it says more than the name (no "Log Log").
  if (p.op_name && p.op_type !== p.op_name) title.append(el('span', 'muted', ` ${p.op_type}`));
  if (p.graph_name) {
    const graph = el('span', 'muted rc-graph', ` in ${p.graph_name} (${graphKindShort(p.graph_name, framework)})`);
    graph.title = `${p.graph_name}: ${graphKind(p.graph_name, framework)}`;
    title.append(graph);
  }
  // An op's k-th run: "trace" for a graph op (Graph Execution's rows), "execution" only for the timeline's (eager)
  const nth = el(
    'span',
    'muted rc-nth',
    ` · ${ordinal(p.run_number + 1)} ${p.alert.source === 'execution' ? 'execution' : 'trace'}`,
  );
  nth.title = 'How many times this op had run: its traces in Graph Execution (executions: the timeline, eager ops)';
  title.append(nth);
  if (p.user_frame)
    title.append(el('span', 'rc-where-short', ` · ${baseName(p.user_frame.path)}:${p.user_frame.line}`));
  if (rc.report_text) title.append(copyButton(rc.report_text));
  title.append(valuesButton(onValues));
  return title;
}

function valuesButton(onValues: () => void): HTMLElement {
  const values = el('button', 'tv-open-btn', 'values');
  values.dataset.testid = 'rc-values';
  values.title = "Show this op's output and inputs in Tensor Values";
  values.addEventListener('click', (e) => {
    e.stopPropagation();
    onValues();
  });
  return values;
}

function outputLine(p: Producer): HTMLElement {
  const out = el('div', 'rc-line');
  out.append(el('span', 'muted', 'output '), renderHealth(p.output_health));
  if (p.overflow) out.append(el('span', 'rc-note', ` ${p.overflow}`));
  // an anonymous loss op (compile_loss/mse/Square): which loss, and the compile() line that chose it (#38 item 5)
  if (p.loss) {
    const loss = el('span', 'rc-note', ` ${p.loss}`);
    loss.dataset.testid = 'rc-loss';
    out.append(loss);
  }
  // a JAX op whose body was not traced (a while loop's later iterations, a shard_map): analysis/loop_iterations.py
  if (p.untraced_body) {
    const body = el('span', 'rc-note', ` ${p.untraced_body}`);
    body.dataset.testid = 'rc-untraced-body';
    out.append(body);
  }
  return out;
}

/** A gradient's forward op: its name, the line to fix, and why. */
function forwardLines(p: Producer): HTMLElement[] {
  if (!p.forward) return [];
  const fwd = el('div', 'rc-line rc-forward');
  fwd.dataset.testid = 'rc-forward';
  fwd.append(
    el('span', 'muted', 'gradient of '),
    el('b', '', p.forward.op_name),
    el('span', 'muted', ` ${p.forward.op_type}`),
  );
  const lines = [fwd, sourceLine(p.forward.user_frame, p.forward.source_line, 'fix', 'rc-fix')];
  if (p.forward.why) {
    const why = el('div', 'rc-line rc-note', p.forward.why);
    why.dataset.testid = 'rc-why';
    lines.push(why);
  }
  return lines;
}

/** The data carried it (which batch, where, made by which op), or what a capsule's captured batch held. */
function dataLines(p: Producer): HTMLElement[] {
  const lines: HTMLElement[] = [];
  if (p.data) {
    const data = el('div', 'rc-line rc-data');
    data.dataset.testid = 'rc-data';
    const at = p.data.positions?.length
      ? ` · non-finite at ${p.data.positions.map((x) => `(${x.join(', ')})`).join(' ')}`
      : '';
    const batch = p.data.batch === null ? 'a batch' : `batch ${p.data.batch}`; // from 0, as the report and JSON
    // Born inside the pipeline (a map function's division): the op's own line is the fix, the dataset's is context
    const head = p.data.born_in_pipeline
      ? `born in the input pipeline, reached ${batch}`
      : `the data carried it: ${batch}`;
    data.append(el('span', '', `${head}${at}`));
    lines.push(data);
    if (p.data.source_op && p.data.born_in_pipeline)
      lines.push(sourceLine(p.data.user_frame, null, `the dataset built by ${p.data.source_op} at`, 'rc-context'));
    else if (p.data.source_op)
      lines.push(sourceLine(p.data.user_frame, p.data.source_line, `made by ${p.data.source_op}`, 'rc-fix'));
  }
  if (p.capsule_batch) {
    // A capsule's replay: what the captured batch held (the NaN came with it, or the value the op could not take)
    const batch = el('div', 'rc-line rc-data', p.capsule_batch);
    batch.dataset.testid = 'rc-capsule-batch';
    lines.push(batch);
  }
  return lines;
}

/** Each input: slot, name, its health when traced, and what it is. */
function inputLines(p: Producer): HTMLElement[] {
  return p.inputs.map((input) => {
    const row = el('div', 'rc-line rc-input');
    row.dataset.testid = 'rc-input';
    row.append(
      el('span', 'muted', `in ${input.slot} `),
      el('span', 'rc-in-name', `${input.op_name}:${input.output_slot} `),
    );
    if (input.traced && input.health) row.append(renderHealth(input.health, { opType: p.op_type, slot: input.slot }));
    row.append(el('span', 'muted rc-desc', ` ${input.description}`));
    return row;
  });
}

/** Producers skipped as contained, the circular buffer's note, the server's message. */
function footLines(rc: RootCauseResponse): HTMLElement[] {
  const lines = rc.skipped.map((skip) => {
    const row = el('div', 'rc-line rc-skip muted', `skipped (contained): ${skip.description}`);
    row.dataset.testid = 'rc-skip';
    return row;
  });
  if (rc.first_kept) {
    const row = el('div', 'rc-line rc-note', 'first kept: a circular buffer dropped earlier records');
    row.dataset.testid = 'rc-first-kept';
    lines.push(row);
  }
  if (rc.message) {
    const msg = el('div', 'rc-msg muted', rc.message);
    msg.title = rc.message;
    lines.push(msg);
  }
  return lines;
}

/** One click (or Enter) focuses every panel on the producer. */
function focusable(card: HTMLElement, onFocus: () => void): void {
  card.tabIndex = 0;
  card.setAttribute('role', 'button');
  card.title = 'Focus every panel on this op';
  card.addEventListener('click', onFocus);
  card.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') onFocus();
  });
}

/** A user frame as `file:line` and its code; `label` says which line it is (fix, during, made by …). */
function sourceLine(frame: StackFrame | null, code: string | null, label: string, testid: string): HTMLElement {
  const loc = el('div', 'rc-src');
  loc.dataset.testid = testid;
  if (!frame) return loc;
  const file = el('span', 'rc-file', `${baseName(frame.path)}:${frame.line}`);
  if (label) loc.append(el('span', 'muted rc-which', `${label} `));
  loc.append(file);
  if (code !== null) loc.append(el('code', 'rc-code', code.trim()));
  loc.title = `${frame.path ?? ''}:${frame.line} in ${frame.function}`;
  return loc;
}
