/**
 * The frame every panel shares: a title bar with optional tools, a body, and one status overlay that shows the
 * loading, empty (with the reason) or error state, so every panel states why it shows nothing.
 */
export type PanelState =
  | { kind: 'content' }
  | { kind: 'loading'; text?: string }
  | { kind: 'empty'; text: string }
  | { kind: 'error'; text: string };

export class Panel {
  readonly element: HTMLElement;
  readonly tools: HTMLDivElement;
  readonly body: HTMLDivElement;
  private readonly status: HTMLDivElement;
  private readonly titleEl: HTMLSpanElement;

  constructor(title: string, testId: string) {
    this.element = document.createElement('section');
    this.element.className = 'panel';
    this.element.dataset.testid = testId;
    const head = document.createElement('header');
    head.className = 'panel-head';
    this.titleEl = document.createElement('span');
    this.titleEl.className = 'panel-title';
    this.titleEl.textContent = title;
    this.tools = document.createElement('div');
    this.tools.className = 'panel-tools';
    head.append(this.titleEl, this.tools);
    this.body = document.createElement('div');
    this.body.className = 'panel-body';
    this.status = document.createElement('div');
    this.status.className = 'panel-status';
    this.status.dataset.testid = `${testId}-status`;
    this.element.append(head, this.body, this.status);
    this.setState({ kind: 'loading' });
  }

  setTitle(text: string): void {
    this.titleEl.textContent = text;
  }

  setState(s: PanelState): void {
    this.element.dataset.state = s.kind;
    if (s.kind === 'content') {
      this.status.hidden = true;
      this.status.textContent = '';
      return;
    }
    this.status.hidden = false;
    this.status.className = `panel-status panel-status-${s.kind}`;
    this.status.textContent = s.kind === 'loading' ? (s.text ?? 'Loading…') : s.text;
  }
}

/** Small DOM helper: an element with a class and text (always textContent, never HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls = '', text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
