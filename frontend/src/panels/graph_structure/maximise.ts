/**
 * The Graph Structure panel shown over the whole dashboard and back (a drawn neighbourhood needs room: at its
 * usual ~550×240 px a few hops do not fit at a readable size). Presentation only: a class on the panel; the
 * button and Esc toggle it, and the drawing keeps its scale and centre (drawn_graph.ts follows its size).
 */
import { el } from '../../widgets/panel.ts';

export function maximiseButton(panel: HTMLElement): HTMLButtonElement {
  const button = el('button', 'gs-maximise');
  button.dataset.testid = 'gs-maximise';
  const show = () => {
    const on = panel.classList.contains('gs-maximised');
    button.textContent = on ? '⤡ Restore' : '⤢ Maximise';
    button.title = on ? 'Back to the dashboard (Esc)' : 'Show the graph over the whole dashboard';
    button.setAttribute('aria-pressed', String(on));
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && panel.classList.contains('gs-maximised')) {
      e.stopPropagation();
      toggle();
    }
  };
  const toggle = () => {
    const on = panel.classList.toggle('gs-maximised');
    if (on) document.addEventListener('keydown', onKey, true);
    else document.removeEventListener('keydown', onKey, true);
    show();
  };
  button.addEventListener('click', toggle);
  show();
  return button;
}
