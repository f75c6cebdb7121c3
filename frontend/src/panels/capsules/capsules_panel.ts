/**
 * NaN capsules (#26), opened from the header's "Capsules…" button: one card per capsule under the logdir — trigger,
 * step / epoch / batch, the replay's verdict, the replay command (copyable), the batch per sample (bad samples
 * first: which sample did it; a row opens that sample in Tensor Values), the variables holding non-finite values, every batch array and variable (a click opens
 * it in Tensor Values: capsule_arrays_list.ts) — and, once replayed, a button that opens the
 * replay's run, whose root cause names the line. A damaged capsule's card says what is wrong. Asked when opened
 * (the `capsules` route), never polled.
 */
import type { Controller } from '../../controller/controller.ts';
import type { CapsuleInfo, CapsuleSampleLoss } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';
import { capsuleArraysList } from './capsule_arrays_list.ts';
import { layerHeatmap } from './capsule_layers_heatmap.ts';
import { samplePages } from './capsule_sample_pages.ts';
import { ReturnToCapsules } from './capsule_return.ts';
import { capsuleLanding } from './capsule_landing.ts';

function placeText(c: CapsuleInfo): string {
  const parts = [`step ${c.step ?? '?'}`];
  if (c.epoch !== null && c.epoch !== undefined) parts.push(`epoch ${c.epoch}`);
  if (c.batch_index !== null && c.batch_index !== undefined) parts.push(`batch ${c.batch_index}`);
  return parts.join(' · ');
}

/** The loss of each sample at the trigger (#36): the sentence, then the top rows (non-finite first); a row opens that
 * sample of the batch's inputs in Tensor Values. */
function lossTable(
  loss: CapsuleSampleLoss,
  inputs: string | undefined,
  open: (array: string, sample: number) => void,
): HTMLElement {
  const box = el('div', 'capsule-loss');
  box.dataset.testid = 'capsule-loss';
  box.append(el('div', 'capsule-loss-text', `per-sample loss: ${loss.text}`));
  if (loss.previous) box.append(el('div', 'capsule-loss-text muted', `previous step: ${loss.previous}`));
  if (!loss.rows.length) return box;
  const table = el('table', 'capsule-samples');
  const head = el('tr');
  for (const label of ['sample', 'loss']) head.append(el('th', '', label));
  const thead = el('thead');
  thead.append(head);
  const body = el('tbody');
  for (const r of loss.rows) {
    const finite = typeof r.loss === 'number';
    const tr = el('tr', finite ? 'capsule-sample' : 'capsule-bad capsule-sample');
    tr.dataset.testid = 'capsule-loss-row';
    const value = typeof r.loss === 'number' ? r.loss.toPrecision(4) : r.loss;
    for (const cell of [String(r.sample), value]) tr.append(el('td', '', cell));
    if (inputs) {
      tr.title = `open sample ${r.sample} of ${inputs} in Tensor Values`;
      tr.addEventListener('click', () => open(inputs, r.sample));
    }
    body.append(tr);
  }
  table.append(thead, body);
  box.append(table);
  return box;
}

export class CapsulesPanel {
  readonly element = el('div', 'capsules-panel');
  readonly button = el('button', 'capsules-open', 'Capsules…');
  private count = -1;
  private capsules: CapsuleInfo[] = [];
  private opened = false; // opened on its own once (openFirst); after that only the button opens it
  private readonly back: ReturnToCapsules; // closing Tensor Values opened from a card shows the panel again

  constructor(private readonly ctl: Controller) {
    this.element.dataset.testid = 'capsules-panel';
    this.back = new ReturnToCapsules(ctl.store, () => (this.element.hidden = false));
    this.element.hidden = true;
    this.button.dataset.testid = 'capsules-open';
    this.button.title = 'NaN capsules: the batch and the state captured at the first NaN, and their replays';
    this.button.hidden = true;
    this.button.addEventListener('click', () => this.toggle());
    // A replay that finishes adds a run: ask again, so the card's verdict and its run button appear.
    ctl.store.subscribe((s, prev) => {
      if ((s.runs.data?.runs.length ?? 0) !== (prev.runs.data?.runs.length ?? 0)) void this.load();
      else if (s.runs.data !== prev.runs.data) this.openFirst(); // until decided: a run's summary may come later
    });
    void this.load();
  }

  toggle(): void {
    this.show(this.element.hidden);
    if (!this.element.hidden) void this.load();
  }

  /** Shown or not, and so on the overlay stack (Escape closes the topmost). */
  private show(shown: boolean): void {
    this.element.hidden = !shown;
    const close = () => !this.element.hidden && (this.show(false), true);
    if (shown) this.ctl.overlays.opened('capsules', close);
    else this.ctl.overlays.closed('capsules');
  }

  private async load(): Promise<void> {
    let capsules: CapsuleInfo[];
    let notice: string | undefined;
    try {
      ({ capsules, notice } = await this.ctl.capsules());
    } catch (e) {
      this.element.replaceChildren(el('div', 'capsule-error', `Cannot load capsules: ${String(e)}`));
      return;
    }
    this.count = capsules.length;
    this.capsules = capsules;
    this.button.hidden = this.count === 0 && !notice; // a logdir behind a URL that cannot be listed: say so
    this.button.textContent = `Capsules (${this.count})…`;
    this.element.replaceChildren(...capsules.map((c) => this.card(c)));
    if (notice) this.element.prepend(el('div', 'capsule-error capsule-notice', notice));
    this.element.dataset.ready = 'true';
    this.openFirst();
  }

  /** A capsule folder opens on its capsule, decided once when the runs are known (capsule_landing.ts: the capsules
   * are all there is, or newer than every run's first NaN; the card then leads to the replay's run and its line). */
  private openFirst(): void {
    const runs = this.ctl.store.state.runs.data?.runs;
    if (this.opened || !runs || this.capsules.length === 0) return;
    const landing = capsuleLanding(this.capsules, runs);
    if (landing === 'wait') return;
    this.opened = true;
    this.element.dataset.landing = landing; // what was decided (the e2e tests wait on it)
    if (landing === 'capsules') this.show(true);
  }

  private card(c: CapsuleInfo): HTMLElement {
    const card = el('div', 'capsule-card');
    card.dataset.testid = 'capsule-card';
    card.dataset.path = c.path;
    card.append(el('div', 'capsule-title', c.path));
    if (c.status === 'damaged') {
      card.classList.add('capsule-damaged');
      card.append(el('div', 'capsule-error', `DAMAGED: ${c.error ?? ''}`));
      return card;
    }
    const trigger = el('div', 'capsule-trigger', `trigger: ${c.trigger?.text ?? '?'}`);
    trigger.dataset.testid = 'capsule-trigger';
    const verdict = el('div', `capsule-verdict capsule-${c.verdict ?? 'none'}`, `replay: ${c.verdict_text ?? ''}`);
    verdict.dataset.testid = 'capsule-verdict';
    card.append(trigger, el('div', 'capsule-place', placeText(c)), verdict);
    const command = el('code', 'capsule-command', c.replay_command ?? '');
    command.dataset.testid = 'capsule-command';
    const copy = el('button', 'capsule-copy', 'Copy');
    copy.title = 'Copy the replay command';
    copy.addEventListener('click', () => void navigator.clipboard?.writeText(c.replay_command ?? ''));
    const commandLine = el('div', 'capsule-command-line');
    commandLine.append(command, copy);
    card.append(commandLine);
    if (c.replay_run) {
      const open = el('button', 'capsule-open-run', `Open the replay (${c.replay_run})`);
      open.dataset.testid = 'capsule-open-run';
      open.addEventListener('click', () => {
        this.element.hidden = true;
        this.ctl.chooseRun(c.replay_run as string);
      });
      card.append(open);
    }
    const openSample = (array: string, sample: number) => {
      this.element.hidden = true;
      const capsule = { path: c.path, group: 'batch' as const, name: array, step: c.step ?? 0, sample };
      this.back.arm();
      this.ctl.tensors.open({ source: 'graph', index: -1, output: null, capsule });
    };
    const inputs = (c.arrays ?? []).find((a) => a.group === 'batch')?.name; // the first batch array: the inputs
    if (c.sample_loss) card.append(lossTable(c.sample_loss, inputs, openSample));
    if (c.layer_history) card.append(layerHeatmap(c.layer_history));
    const batchArrays = (c.arrays ?? []).filter((a) => a.group === 'batch').map((a) => a.name);
    card.append(samplePages(this.ctl, c.path, batchArrays, openSample));
    const bad = c.bad_weights ?? [];
    const weights = bad.length
      ? `variables holding non-finite values: ${bad.map((w) => `${w.name} (${w.nan + w.pos_inf + w.neg_inf})`).join(', ')}`
      : 'variables holding non-finite values: none (the capture precedes the update)';
    card.append(el('div', bad.length ? 'capsule-weights capsule-bad' : 'capsule-weights', weights));
    card.append(
      capsuleArraysList(c, (target) => {
        this.element.hidden = true;
        this.back.arm();
        this.ctl.tensors.open(target);
      }),
    );
    return card;
  }
}
