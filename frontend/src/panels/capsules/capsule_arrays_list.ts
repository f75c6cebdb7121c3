/**
 * A NaN capsule card's arrays (#26): the batch arrays (inputs, targets, sample weights, by their flattened names),
 * the model's variables and the optimizer's (by their paths), each a button that opens it in Tensor Values — dtype,
 * shape, NaN/±∞/zero counts, min/max/mean and the value grid, as for a dumped tensor (route `capsule_array`).
 */
import type { TensorTarget } from '../../api/requests.ts';
import type { CapsuleArrayInfo, CapsuleInfo } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';

const GROUP_LABELS: Record<CapsuleArrayInfo['group'], string> = {
  batch: 'batch',
  weights: 'weights',
  optimizer: 'optimizer state',
};

/** The arrays of a sound capsule as buttons, one row per group; `open` gets the Tensor Values target. */
export function capsuleArraysList(c: CapsuleInfo, open: (t: TensorTarget) => void): HTMLElement {
  const box = el('div', 'capsule-arrays');
  box.dataset.testid = 'capsule-arrays';
  const arrays = c.arrays ?? [];
  for (const group of ['batch', 'weights', 'optimizer'] as const) {
    const members = arrays.filter((a) => a.group === group);
    if (!members.length) continue;
    const row = el('div', 'capsule-array-row');
    row.append(el('span', 'capsule-array-group', `${GROUP_LABELS[group]}:`));
    for (const a of members) {
      const b = el('button', 'capsule-array', a.name);
      b.dataset.testid = 'capsule-array';
      b.dataset.group = a.group;
      b.dataset.name = a.name;
      b.title = `${a.dtype} [${a.shape.join(', ')}]: open in Tensor Values`;
      const capsule = { path: c.path, group: a.group, name: a.name, step: c.step ?? 0 };
      b.addEventListener('click', () => open({ source: 'graph', index: -1, output: null, capsule }));
      row.append(b);
    }
    box.append(row);
  }
  return box;
}
