/** Entry point: TensorBoard imports this module inside the plugin's iframe and calls render(). */
export function render(): void {
  const root = document.createElement('div');
  root.id = 'dbg-root';
  root.textContent = 'Debugger';
  document.body.appendChild(root);
}
