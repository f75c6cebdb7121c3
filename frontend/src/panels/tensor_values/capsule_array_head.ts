/**
 * The Tensor Values view's title for a NaN capsule's batch array or variable (#26): where it comes from — "capsule
 * step 4 · batch · x" — its dtype and shape, and the capsule's folder as a tooltip. A capsule array has no op, no
 * inputs: the view hides those; its .npy download is route `capsule_array.npy`. Opened on one sample of a batch
 * array (a row of the card's per-sample table), the title says which.
 */
import type { CapsuleArrayTarget } from '../../api/requests.ts';
import type { TensorResponse } from '../../api/wire.ts';
import { el } from '../../widgets/panel.ts';
import { shapeText } from './format.ts';

/** Where a capsule array comes from, in words. */
export const capsuleArrayTitle = (c: CapsuleArrayTarget): string =>
  `capsule step ${c.step} · ${c.group} · ${c.name}` + (c.sample === undefined ? '' : ` · sample ${c.sample}`);

/** The title's parts for a capsule array (`r`: its answer, once there). */
export function capsuleArrayHead(c: CapsuleArrayTarget, r: TensorResponse | null): HTMLElement[] {
  const title = el('b', 'tv-op', capsuleArrayTitle(c));
  title.dataset.testid = 'tv-capsule-title';
  title.title = `NaN capsule ${c.path}`;
  return [title, el('span', 'tv-shape', r ? ` ${r.dtype ?? '?'} ${shapeText(r.shape)}` : '')];
}
