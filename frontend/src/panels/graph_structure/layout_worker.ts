/**
 * The drawn graph's layout worker: dagre on a 300-node neighbourhood takes ~1 s, which on the page's thread froze
 * the whole dashboard (scrolling, keys, the other panels). Each message is one request, answered with its `seq` so
 * the page can drop an answer a newer request has made stale (layout_client.ts).
 */
import { computeLayout, type LayoutRequest } from './layout.ts';

interface WorkerScope {
  onmessage: ((e: MessageEvent<{ seq: number; request: LayoutRequest }>) => void) | null;
  postMessage(message: unknown): void;
}

const scope = self as unknown as WorkerScope;
scope.onmessage = (e) => {
  const { seq, request } = e.data;
  try {
    scope.postMessage({ seq, result: computeLayout(request) });
  } catch (err) {
    scope.postMessage({ seq, error: String(err) });
  }
};
