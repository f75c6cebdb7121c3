/**
 * Where the dashboard lands when the logdir holds NaN capsules (#36): on the capsules when they are all there is
 * (every run is one of their replays), or when a capsule was captured after every other run's first NaN (the
 * newest failure is the capsule's: its card leads on); else on the runs' root cause as without capsules.
 *
 * A capsule's time is its manifest's `created` (`captured_time`, written at the capture); a run's first NaN, the
 * `wall_time` its dump recorded for that tensor (the runs poll's `summary.first_nan`). A run still being read or
 * analysed has no answer yet: 'wait', and the next poll asks again. A run without a NaN has no first NaN: it never
 * outranks a capsule.
 */
import type { CapsuleInfo, RunInfo } from '../../api/wire.ts';

export type Landing = 'capsules' | 'runs' | 'wait';

export function capsuleLanding(capsules: CapsuleInfo[], runs: RunInfo[]): Landing {
  if (capsules.length === 0) return 'runs';
  const replays = new Set(capsules.map((c) => c.replay_run).filter((r) => r));
  const others = runs.filter((r) => !replays.has(r.name));
  if (others.length === 0) return 'capsules';
  if (others.some((r) => r.summary.status === 'indexing' || r.summary.status === 'analyzing')) return 'wait';
  const captured = capsules.map((c) => c.captured_time).filter((t): t is number => typeof t === 'number');
  if (captured.length === 0) return 'runs'; // no capsule says when it was captured: as without capsules
  const firsts = others.map((r) => r.summary.first_nan?.wall_time).filter((t): t is number => typeof t === 'number');
  return firsts.every((t) => Math.max(...captured) > t) ? 'capsules' : 'runs';
}
