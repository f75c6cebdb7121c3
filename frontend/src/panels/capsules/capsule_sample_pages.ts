/**
 * A capsule's batch per sample on its card (#36), one batch array at a time (x rows and y rows never mixed): for each
 * sample its non-finite count, min, max |x| (finite), negatives and zeros; the rows the replay's root cause points
 * at first and marked, then the bad ones. Paged through the `capsule_samples` route (a batch of 100 k samples is
 * never sent whole); a row opens that sample of its array in Tensor Values.
 */
import type { Controller } from '../../controller/controller.ts';
import type { CapsuleSampleRow, CapsuleSamplesResponse } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';

const PAGE = 8;

function num(v: number | null): string {
  return v === null ? '—' : v.toPrecision(4);
}

export function samplePages(
  ctl: Controller,
  capsule: string,
  arrays: string[],
  open: (array: string, sample: number) => void,
): HTMLElement {
  const box = el('div', 'capsule-sample-pages');
  const tabs = el('div', 'capsule-sample-tabs');
  const note = el('div', 'capsule-sample-note muted');
  const table = el('table', 'capsule-samples');
  table.dataset.testid = 'capsule-samples';
  const pager = el('div', 'capsule-sample-pager');
  const prev = el('button', '', '‹');
  const next = el('button', '', '›');
  const where = el('span', 'muted');
  where.dataset.testid = 'capsule-samples-where';
  prev.title = 'previous rows';
  next.title = 'next rows';
  pager.append(prev, where, next);
  box.append(tabs, note, table, pager);
  let array = arrays[0] ?? '';
  let begin = 0;
  let total = 0;
  let asked = 0;

  const row = (s: CapsuleSampleRow): HTMLElement => {
    const bad = s.nonfinite > 0 || s.marked;
    const tr = el('tr', `capsule-sample${bad ? ' capsule-bad' : ''}${s.marked ? ' capsule-marked' : ''}`);
    tr.dataset.testid = s.marked ? 'capsule-sample-marked' : 'capsule-sample';
    tr.title = `open sample ${s.sample} of ${array} in Tensor Values`;
    tr.addEventListener('click', () => open(array, s.sample));
    const cells = [array, String(s.sample), String(s.nonfinite), num(s.min), num(s.max_abs)];
    for (const c of [...cells, String(s.negatives), String(s.zeros)]) tr.append(el('td', '', c));
    if (s.marked) tr.firstElementChild?.prepend('▶ ');
    return tr;
  };

  const show = (page: CapsuleSamplesResponse): void => {
    total = page.total;
    const head = el('tr');
    for (const label of ['batch array', 'sample', 'non-finite', 'min', 'max |x|', 'negatives', 'zeros'])
      head.append(el('th', '', label));
    const thead = el('thead');
    thead.append(head);
    const body = el('tbody');
    body.append(...page.rows.map(row));
    table.replaceChildren(thead, body);
    note.textContent = page.marked_by
      ? `▶ ${page.marked.toLocaleString()} sample(s) the replay's root cause points at: ${page.marked_by}`
      : 'per sample, the bad ones first (finite values: min, max |x|, negatives, zeros)';
    where.textContent = `${page.begin + 1}–${page.end} of ${page.total.toLocaleString()} (${array})`;
    prev.disabled = page.begin === 0;
    next.disabled = page.end >= page.total;
  };

  const load = async (): Promise<void> => {
    const ticket = ++asked;
    try {
      const page = await ctl.capsuleSamples(capsule, array, begin, begin + PAGE);
      if (ticket === asked) show(page);
    } catch (e) {
      if (ticket === asked) note.textContent = `Cannot load the samples of ${array}: ${String(e)}`;
    }
  };

  for (const name of arrays) {
    const tab = el('button', name === array ? 'capsule-sample-tab capsule-tab-on' : 'capsule-sample-tab', name);
    tab.dataset.testid = 'capsule-sample-tab';
    tab.addEventListener('click', () => {
      array = name;
      begin = 0;
      for (const t of tabs.children) t.classList.toggle('capsule-tab-on', t === tab);
      void load();
    });
    tabs.append(tab);
  }
  prev.addEventListener('click', () => {
    begin = Math.max(0, begin - PAGE);
    void load();
  });
  next.addEventListener('click', () => {
    if (begin + PAGE < total) begin += PAGE;
    void load();
  });
  if (array) void load();
  return box;
}
