/**
 * Device names as a list shows them: TensorFlow's full name (`/job:localhost/replica:0/task:0/device:CPU:1`) is
 * mostly the same prefix on every row, so columns show what differs (`CPU:1`) and keep the full name for the title.
 */

/** `CPU:1` of `/job:localhost/replica:0/task:0/device:CPU:1`; a name in another form is shown as it is. */
export function shortDevice(name: string): string {
  const at = name.lastIndexOf('/device:');
  return at >= 0 ? name.slice(at + '/device:'.length) : name;
}

/** The short form of each name where it tells them apart, else the task and the short form, else the full name
 * (two workers' `CPU:0` must not read the same in a facet). */
export function deviceLabels(names: readonly string[]): Map<string, string> {
  const forms = [shortDevice, (n: string) => n.replace(/^.*\/(task:[^/]+)\/device:/, '$1/'), (n: string) => n];
  for (const form of forms) {
    const labels = names.map(form);
    if (new Set(labels).size === names.length) return new Map(names.map((n, i) => [n, labels[i]]));
  }
  return new Map(names.map((n) => [n, n]));
}
