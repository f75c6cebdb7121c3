"""The replay of a replicated step's capsule (capsule/distribute.py writes it): the captured batch handed to the
replayed step as the run's replicas had it, or the offending replica's rows on one device.

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

from typing import Any


def replay_input(strategy: Any, replay: Any, batch: Any) -> tuple[Any, bool]:
    """The captured batch as the replayed step takes it: (value, whether through strategy.run). With the strategy
    and replica count of the run, each replica gets the rows it had; else the offending replica's rows alone, on one
    device. `replay.replicas` says which (the verdict carries it)."""
    import tensorflow as tf

    part = (replay.capsule.manifest.get("replicas") if replay.capsule is not None else None) or {}
    rows = {int(k): v for k, v in (part.get("rows") or {}).items()}
    if not rows:
        return batch, False
    count = int(part["count"])
    mirrored = isinstance(strategy, tf.distribute.MirroredStrategy) and int(part.get("workers", 1)) == 1
    if mirrored and strategy.num_replicas_in_sync == count:
        replay.replicas = f"replayed under {type(strategy).__name__} with {count} replicas, each with its captured rows"

        def shard(context: Any) -> Any:
            begin, end = rows[context.replica_id_in_sync_group]
            return tf.nest.map_structure(lambda v: v[begin:end], batch)

        return strategy.experimental_distribute_values_from_function(shard), True
    bad = [r for r in part.get("non_finite", []) if r in rows] or sorted(rows)
    begin, end = rows[bad[0]]
    have = strategy.num_replicas_in_sync if isinstance(strategy, tf.distribute.Strategy) else 1
    replay.replicas = (
        f"replayed replica {bad[0]}'s rows ({begin}..{end} of the batch) on one device: the run had {count} "
        f"replicas{' over ' + str(part['workers']) + ' workers' if int(part.get('workers', 1)) > 1 else ''}, "
        f"this program has {have}"
    )
    return tf.nest.map_structure(lambda v: v[begin:end], batch), False
